package sink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"time"
)

// Group is one sink served by several processes on one port, each with its
// own limit of open files: this process's Server and Procs-1 children (a
// Fleet) beside it, all listening with SO_REUSEPORT, their counters summed.
// With Procs at most 1 it is this process's Server alone, listening
// plainly, so that a port in use is an error rather than a silent share
// with another sink.
type Group struct {
	// Listen is the address to listen on; port 0 picks a free one, which
	// the children then share.
	Listen string
	// Echo writes back what is received (Server.Echo).
	Echo bool
	// Procs is the count of processes, this one included.
	Procs int
	// Command returns the command of one child, as Fleet.Command;
	// required when Procs > 1.
	Command func(ctx context.Context) *exec.Cmd
	// StartTimeout is Fleet.StartTimeout.
	StartTimeout time.Duration

	srv   Server
	fleet Fleet
}

// Totals are a Group's summed counters, as its StatsHandler serves them.
type Totals struct {
	Stats
	Processes int `json:"processes"`
}

// Totals returns the counters of every process of g so far (the children's
// as last reported, once a second).
func (g *Group) Totals() Totals {
	return Totals{Stats: g.srv.Stats().Add(g.fleet.Stats()), Processes: 1 + g.fleet.Size()}
}

// StatsHandler serves g.Totals as JSON on GET.
func (g *Group) StatsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "only GET", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(g.Totals())
	})
}

// Run listens, starts the children, calls ready with the address once all
// of them listen, and serves until ctx ends (nil) or a part fails: a child
// that exits, or this process's server. It returns once every child has
// exited and reported its last counters. Call it once.
func (g *Group) Run(ctx context.Context, ready func(addr net.Addr)) error {
	ln, err := g.listen(ctx)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", g.Listen, err)
	}
	g.srv.Echo = g.Echo
	g.fleet.Command, g.fleet.StartTimeout = g.Command, g.StartTimeout
	// runCtx ends everything: the caller's stop, or a part that fails.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	served := make(chan error, 1)
	go func() { served <- g.srv.Serve(runCtx, ln) }()
	if g.Procs > 1 {
		if err := g.fleet.Start(runCtx, cancel, g.Procs-1, ln.Addr().String(), g.Echo); err != nil {
			cancel(err)
		}
	}
	if runCtx.Err() == nil {
		ready(ln.Addr())
	}
	<-runCtx.Done()
	var errs []error
	if err := <-served; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, net.ErrClosed) {
		errs = append(errs, err)
	}
	if err := g.fleet.Wait(); err != nil && ctx.Err() == nil {
		errs = append(errs, err)
	}
	if cause := context.Cause(runCtx); len(errs) == 0 && ctx.Err() == nil {
		errs = append(errs, cause)
	}
	return errors.Join(errs...)
}

func (g *Group) listen(ctx context.Context) (net.Listener, error) {
	if g.Procs > 1 {
		return ListenReusePort(ctx, "tcp", g.Listen)
	}
	var lc net.ListenConfig
	return lc.Listen(ctx, "tcp", g.Listen)
}
