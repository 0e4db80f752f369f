package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"

	"github.com/jonboulle/clockwork"
	"golang.org/x/sync/errgroup"

	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
	"github.com/tunnelprobe/tunnelprobe/internal/reaper"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// Config is the health server's: the monitor's configuration and what the
// server adds around it. The zero value serves the monitor's defaults.
type Config struct {
	// Monitor configures the checks. Its Observer sees every event, beside
	// the Logger's and the metrics'.
	Monitor middleware.Config
	// HealCommand, when set, is the heal: a shell command run by
	// [HealCommand], in place of Monitor.Heal.
	HealCommand string
	// HealRequests, when set, are the heal: HTTP requests sent in order
	// by [HealHTTP], in place of Monitor.Heal; it excludes HealCommand.
	HealRequests []HealRequest
	// Metrics also serves Prometheus metrics at [MetricsPath] on the same
	// listener: the monitor's (package prom), the Go runtime's and the
	// process's.
	Metrics bool
	// GRPC also serves grpc.health.v1.Health (package grpchealth) on the
	// listener Serve is given: gRPC calls (HTTP/2 without TLS, as gRPC's
	// insecure clients and the kubelet's grpc probe send them) go to it,
	// every other request to the HTTP endpoints.
	GRPC bool
	// MaxConnections bounds the connections each listener serves at once,
	// HTTP and gRPC alike: a new connection past it is refused at once
	// and closed, an HTTP/1.1 client with a 503 saying why (Retry-After:
	// 1), a gRPC call with UNAVAILABLE saying so (httpserve.Options), and
	// the refusals are logged and counted. Zero means
	// DefaultMaxConnections; negative, no bound.
	MaxConnections int
	// MaxStreams bounds the streams (gRPC calls) one HTTP/2 connection has
	// open at once: the server announces it, grpc-go clients queue a call
	// past it, and a stream past it is refused. Zero means
	// DefaultMaxStreams; negative, net/http's default (at least 100).
	MaxStreams int
	// MaxWatches bounds the gRPC Watch calls served at once, over every
	// listener: past it a Watch is answered RESOURCE_EXHAUSTED, with a
	// message (grpchealth.Config.MaxWatches). Zero means
	// DefaultMaxWatches; negative, no bound.
	MaxWatches int
	// Reap makes Serve wait for the orphans the process inherits, for a
	// process that is PID 1 (a container's init): the kernel makes it the
	// parent of every process whose parent exits, and without it each
	// heal that leaves a process behind (a daemon started with setsid, a
	// background job killed when the heal ends) leaves a zombie for good.
	// The heal command's exit status stays its own; a child the program
	// starts otherwise than through this server could lose its own, so
	// set it only where the server's heals are the process's only
	// children (tunnelprobe serve sets it when it is PID 1).
	Reap bool
	// Logger receives the monitor's events (middleware.NewSlogObserver),
	// the heal command's output, the server's own errors (malformed
	// requests, failed handshakes) at warn level, and a line when it has
	// shut down. Nil discards them.
	Logger *slog.Logger
}

// A Server is a monitor's loop and its HTTP endpoints, on one listener,
// and its gRPC health service on the same or another.
type Server struct {
	mon        *middleware.Monitor
	handler    http.Handler
	logger     *slog.Logger
	grpcOnHTTP bool
	limits     limits
	refusals   *refusals
	reaper     *reaper.Reaper // nil without Config.Reap
}

// New returns the health server of check under cfg. It starts nothing; an
// error is a bad cfg.
func New(checker check.Checker, cfg Config) (*Server, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rp := newReaper(cfg, logger)
	mc := cfg.Monitor
	if cfg.Logger != nil {
		mc.Observer = middleware.MultiObserver(middleware.NewSlogObserver(logger), mc.Observer)
	}
	switch {
	case cfg.HealCommand != "" && len(cfg.HealRequests) > 0:
		return nil, errors.New("server: a heal command and heal requests exclude each other")
	case cfg.HealCommand != "":
		mc.Heal = healCommand(cfg.HealCommand, logger, rp)
	case len(cfg.HealRequests) > 0:
		mc.Heal = HealHTTP(cfg.HealRequests, nil, logger)
	}
	var m *metrics
	if cfg.Metrics {
		var err error
		if m, err = newMetrics(&mc); err != nil {
			return nil, err
		}
	}
	mon, err := middleware.New(checker, mc)
	if err != nil {
		return nil, err
	}
	s := &Server{mon: mon, handler: mon.Handler(), logger: logger, grpcOnHTTP: cfg.GRPC, limits: limitsOf(cfg), reaper: rp}
	s.refusals = &refusals{logger: logger, clock: mc.Clock, max: s.limits.connections}
	if s.refusals.clock == nil {
		s.refusals.clock = clockwork.NewRealClock()
	}
	if m != nil {
		s.handler = m.mount(mon, mc.Evidence, s.handler)
		s.refusals.counter = m.refused
	}
	return s, nil
}

// Serve runs the monitor's loop and serves its endpoints on ln until ctx
// ends, then shuts down and returns nil once nothing it started runs any
// more. It returns an error when serving fails for good; the loop is
// stopped then too. Call it, or ServeWithGRPC, once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return s.ServeWithGRPC(ctx, ln, nil)
}

// ServeWithGRPC is Serve, and on grpcLn, unless it is nil, gRPC's health
// service alone (see [Config].GRPC). When serving either listener fails
// for good, both stop and the error is returned. It closes both listeners.
func (s *Server) ServeWithGRPC(ctx context.Context, ln, grpcLn net.Listener) error {
	// runCtx ends the loop with the server, also when serving fails.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	monitorDone, reaperDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(monitorDone)
		_ = s.mon.Run(runCtx) // nil when runCtx ends; ErrAlreadyRunning is a second Serve
	}()
	go func() {
		defer close(reaperDone)
		s.reap(runCtx)
	}()
	calls := s.newGRPC()
	opts := httpserve.Options{
		ErrorLog:         slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
		UnencryptedHTTP2: s.grpcOnHTTP,
		MaxConnections:   s.limits.connections, MaxConcurrentStreams: s.limits.streams,
		Refused: s.refusals.refused,
	}
	handler := s.handler
	if s.grpcOnHTTP {
		handler = withGRPC(calls, handler)
	}
	g, gctx := errgroup.WithContext(runCtx)
	// The listeners' lifecycle ends only once the gRPC calls in flight
	// have answered (see grpcCalls): it would cut their statuses.
	serveCtx, endServe := context.WithCancel(context.WithoutCancel(gctx))
	defer endServe()
	g.Go(func() error {
		<-gctx.Done()
		calls.drain()
		endServe()
		return nil
	})
	g.Go(func() error { return httpserve.Serve(serveCtx, ln, handler, opts) })
	if grpcLn != nil {
		grpcOpts := opts
		grpcOpts.UnencryptedHTTP2 = true
		g.Go(func() error { return httpserve.Serve(serveCtx, grpcLn, calls, grpcOpts) })
	}
	err := g.Wait()
	calls.gs.Stop() // no call is left on it; this releases what gRPC registered
	s.refusals.flush()
	if ctx.Err() != nil {
		s.logger.Info("shut down")
	}
	stop()
	<-monitorDone
	<-reaperDone
	return err
}
