// Package httpserve is the project's one HTTP server lifecycle: every
// listener it opens is served by [Serve], with the same timeouts and the
// same graceful shutdown, chosen once here.
//
// A client gets ReadHeaderTimeout to send its request headers, so slow or
// silent connections cannot pile up, and a kept-alive connection is closed
// after IdleTimeout without a request. There is no read or write timeout:
// the write deadline would run from the end of the headers and cut a
// /check/ that may legitimately take a minute; handlers bound their own work.
//
// An HTTP/2 connection (gRPC's) that sent nothing for PingInterval is
// pinged, and closed when no answer comes within PingTimeout: a client that
// vanished without closing (a killed pod, a cut link) would otherwise hold
// its streams, a gRPC Watch, for good. Options bound the connections and
// the streams a server holds at once; by default neither is bounded. A
// connection past MaxConnections is not left waiting to be accepted: it is
// answered at once with a refusal its client understands (a 503, a gRPC
// UNAVAILABLE, a GOAWAY) and closed, and the refusals in progress are
// bounded in turn, so that a flood of them costs a few goroutines.
//
// When ctx ends, every request in flight sees its context cancelled at once
// (their context derives from ctx), then the server shuts down gracefully,
// giving them ShutdownGrace to write their answers before it closes what is
// left.
package httpserve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
)

// The lifecycle's timeouts.
const (
	ReadHeaderTimeout = 5 * time.Second
	IdleTimeout       = time.Minute
	ShutdownGrace     = 5 * time.Second
	PingInterval      = time.Minute
	PingTimeout       = 15 * time.Second
)

// Options adjusts one server. The zero value is useful.
type Options struct {
	// ErrorLog receives the server's own errors (failed handshakes,
	// malformed requests); nil means the log package's standard logger.
	ErrorLog *log.Logger
	// IdleTimeout, PingInterval and PingTimeout replace the package's
	// when set (tests).
	IdleTimeout, PingInterval, PingTimeout time.Duration
	// UnencryptedHTTP2 also serves HTTP/2 without TLS, with prior
	// knowledge, beside HTTP/1.1: what gRPC's insecure clients (the
	// kubelet's grpc probe) speak.
	UnencryptedHTTP2 bool
	// MaxConnections, when positive, bounds the connections served at
	// once; a slot frees when its connection closes. A connection past it
	// is refused at once and closed, in the protocol its client speaks:
	// an HTTP/1.1 client (or one that sends nothing) gets a 503 with
	// Retry-After: 1 and a message, "too many connections: this server
	// serves at most N at once"; an HTTP/2 client without TLS (gRPC's) its
	// first request refused (a gRPC call with UNAVAILABLE and the message)
	// and a GOAWAY, ENHANCE_YOUR_CALM, with the message. Zero: no bound.
	MaxConnections int
	// Refused, when set, is called as each connection past MaxConnections
	// is refused, from the accept loop: it must return at once.
	Refused func()
	// MaxConcurrentStreams, when positive, bounds the streams (requests,
	// gRPC calls) one HTTP/2 connection has open at once; the server
	// announces it and refuses a stream past it. Zero: net/http's default
	// (at least 100).
	MaxConcurrentStreams int
}

// Serve serves h on ln until ctx ends, then shuts down as the package
// documentation says and returns nil once every connection is closed. It
// returns the error when accepting fails for good (transient errors, such
// as running out of file descriptors, are ridden out by net/http). ln is
// closed in every case.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, opts Options) error {
	if opts.MaxConnections > 0 {
		lim := newLimitListener(ln, opts.MaxConnections, opts.Refused)
		defer lim.wait() // the refusals in progress, cut short by its Close
		ln = lim
	}
	// The requests' context: cancelled before the shutdown, so that a long
	// poll in flight returns at once rather than holding it up.
	reqCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       cmp.Or(opts.IdleTimeout, IdleTimeout),
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ErrorLog:          opts.ErrorLog,
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: opts.MaxConcurrentStreams,
			SendPingTimeout:      cmp.Or(opts.PingInterval, PingInterval),
			PingTimeout:          cmp.Or(opts.PingTimeout, PingTimeout),
		},
	}
	if opts.UnencryptedHTTP2 {
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
		served = nil
	}
	cancel()
	shutdownCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer stop()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
	}
	if served != nil {
		<-served // http.ErrServerClosed
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), serveErr)
	}
	return nil
}

// An Endpoint is one server of a group that ServeAll runs.
type Endpoint struct {
	// Name says what it serves ("health", "control"); it prefixes its
	// errors.
	Name string
	// Addr is where it listens.
	Addr string
	// Serve serves on ln until ctx ends, as Serve does, and closes ln; its
	// errors say what failed.
	Serve func(ctx context.Context, ln net.Listener) error
}

// ServeAll listens on every endpoint, calling listening with each one's
// address, then serves them all until ctx ends or one of them fails, which
// stops the others; it returns that failure (as the endpoint's Serve named
// it), or nil once ctx ended. When one cannot listen it closes the others'
// listeners, serves none and returns the error named after the endpoint.
func ServeAll(ctx context.Context, endpoints []Endpoint, listening func(name string, addr net.Addr)) error {
	lns := make([]net.Listener, 0, len(endpoints))
	for _, e := range endpoints {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", e.Addr)
		if err != nil {
			for _, ln := range lns {
				ln.Close()
			}
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		lns = append(lns, ln)
		listening(e.Name, ln.Addr())
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { <-gctx.Done(); return nil }) // even with no endpoint, until ctx ends
	for i, e := range endpoints {
		g.Go(func() error { return e.Serve(gctx, lns[i]) })
	}
	return g.Wait()
}
