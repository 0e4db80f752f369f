package prom

import (
	"context"
	"net"
	"net/http"

	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
	"github.com/tunnelprobe/tunnelprobe/internal/promserve"
)

// Endpoint serves a load's Metrics, with the Go runtime's and the
// process's, at /metrics on a listener, as `tunnelprobe load --metrics`
// does. Create it with [Listen]; Close it when the run is over.
type Endpoint struct {
	// Metrics are the load's, to feed with each second of the run.
	Metrics *Metrics
	ln      net.Listener
	cancel  context.CancelFunc
	done    chan error
}

// Listen listens on addr and serves the metrics there until Close.
func Listen(addr string) (*Endpoint, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	reg := promserve.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promserve.Handler(reg))
	ctx, cancel := context.WithCancel(context.Background())
	e := &Endpoint{Metrics: m, ln: ln, cancel: cancel, done: make(chan error, 1)}
	go func() { e.done <- httpserve.Serve(ctx, ln, mux, httpserve.Options{}) }()
	return e, nil
}

// Addr is where the endpoint listens.
func (e *Endpoint) Addr() net.Addr { return e.ln.Addr() }

// Close shuts the server down, waits for it, and returns why it stopped
// serving early, if it did.
func (e *Endpoint) Close() error {
	e.cancel()
	return <-e.done
}
