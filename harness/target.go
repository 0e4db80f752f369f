package harness

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/pki"
)

// CA is the certificate authority generated for one lab run, so that
// checks verify the TLS target for real instead of skipping verification:
// PEM for files and other processes, Pool for tls.Config.RootCAs, and Issue
// for server certificates.
type CA = pki.CA

// NewCA generates a CA valid for a week.
func NewCA() (*CA, error) { return pki.NewCA() }

// TLSTarget is an HTTPS server: GET / answers 200 "ok", so TCP, TLS and
// HTTP checks all have something to verify.
type TLSTarget struct {
	srv  *http.Server
	wg   sync.WaitGroup
	done bool
}

// StartTLSTarget serves HTTPS with cert on ln until Close.
func StartTLSTarget(ln net.Listener, cert tls.Certificate) *TLSTarget {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok\n")
	})
	t := &TLSTarget{srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 30 * time.Second,
		// Handshakes aborted by an outage or a restart are normal here.
		ErrorLog: log.New(io.Discard, "", 0),
	}}
	tl := tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		_ = t.srv.Serve(tl) // returns http.ErrServerClosed after Close
	}()
	return t
}

// Close closes the listener and every connection and waits for the server
// loop to end.
func (t *TLSTarget) Close() error {
	if t.done {
		return nil
	}
	t.done = true
	err := t.srv.Close()
	t.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("harness: TLS target: %w", err)
	}
	return nil
}
