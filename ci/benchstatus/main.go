// Command benchstatus serves, side by side in one process, the status
// endpoint and the bare net/http handler it is measured against, for
// ci/bench-status.sh to load with wrk: each on a listener of its own on
// loopback, so that a run loads one at a time and the ratio of their
// rates, taken in the same run, is what the status costs over a handler
// that does nothing.
//
//   - bare: a handler that writes "healthy\n" and nothing else (net/http
//     sniffs its Content-Type);
//   - headers: the same, with the headers the status sets (Cache-Control,
//     Content-Type, X-Content-Type-Options): what net/http's header work
//     alone costs;
//   - status: m.Handler(), what `tunnelprobe serve` answers at its root,
//     of a monitor whose check passed (healthy); ?format=json for JSON.
//
// It prints "name address" per listener, then serves until its stdin
// closes.
//
//	go run ./ci/benchstatus
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchstatus:", err)
		os.Exit(1)
	}
}

func run() error {
	m, err := middleware.New(check.Func(func(context.Context) error { return nil }), middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		return err
	}
	if r := m.Probe(context.Background()); r.Err != nil {
		return r.Err
	}
	body := []byte("healthy\n")
	noStore, ctText, nosniff := []string{"no-store"}, []string{"text/plain; charset=utf-8"}, []string{"nosniff"}
	handlers := []struct {
		name string
		h    http.Handler
	}{
		{"bare", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write(body)
		})},
		{"headers", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			// Assigned as the status assigns them, with no slice to
			// allocate: the least a handler with these headers costs.
			h := w.Header()
			h["Cache-Control"] = noStore
			h["Content-Type"] = ctText
			h["X-Content-Type-Options"] = nosniff
			_, _ = w.Write(body)
		})},
		{"status", m.Handler()},
	}
	errs := make(chan error, len(handlers))
	var servers []*http.Server
	for _, h := range handlers {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: h.h, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go func() { errs <- srv.Serve(ln) }()
		fmt.Println(h.name, ln.Addr())
	}
	stdin := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		close(stdin)
	}()
	select {
	case <-stdin:
	case err = <-errs:
	}
	for _, srv := range servers {
		srv.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
