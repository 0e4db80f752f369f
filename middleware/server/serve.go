package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"

	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// Options adjusts [Serve]. The zero value is useful.
type Options struct {
	// Logger receives the server's own errors (malformed requests, failed
	// handshakes) at warn level, and a line when it has shut down. Nil
	// discards them.
	Logger *slog.Logger
	// Wrap, in order, wraps the monitor's handler: serve --metrics adds
	// /metrics that way. Each must pass the paths it does not serve on.
	Wrap []func(http.Handler) http.Handler
}

// Serve runs mon's loop and serves mon.Handler() on ln until ctx ends, then
// shuts down and returns nil once nothing it started runs any more. It
// returns an error when serving fails for good; the loop is stopped then
// too.
func Serve(ctx context.Context, ln net.Listener, mon *middleware.Monitor, opts Options) error {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	handler := mon.Handler()
	for _, w := range opts.Wrap {
		handler = w(handler)
	}
	// runCtx ends the loop with the server, also when serving fails.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	monitorDone := make(chan struct{})
	go func() {
		defer close(monitorDone)
		_ = mon.Run(runCtx) // nil when runCtx ends; ErrAlreadyRunning is the caller's bug
	}()
	err := httpserve.Serve(runCtx, ln, handler, httpserve.Options{ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)})
	if ctx.Err() != nil {
		logger.Info("shut down")
	}
	stop()
	<-monitorDone
	return err
}
