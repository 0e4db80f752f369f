package sink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
)

// Group is one sink served by several processes on one port, each with its
// own limit of open files: this process's Server and Procs-1 child
// processes beside it (each a program that calls RunChild), all listening
// with SO_REUSEPORT, their counters summed. With Procs at most 1 it is this
// process's Server alone, listening plainly, so that a port in use is an
// error rather than a silent share with another sink.
type Group struct {
	// Listen is the address to listen on; port 0 picks a free one, which
	// the children then share.
	Listen string
	// Echo writes back what is received (Server.Echo).
	Echo bool
	// Procs is the count of processes, this one included.
	Procs int
	// Command returns the command of one child, made with
	// exec.CommandContext(ctx, ...): the end of ctx stops it. Required
	// when Procs > 1.
	Command func(ctx context.Context) *exec.Cmd
	// StartTimeout bounds the wait for every child to listen; zero means
	// 30 s.
	StartTimeout time.Duration

	srv      Server
	mu       sync.Mutex
	children map[int]Stats // the counters each child that reported last reported
}

// Totals are a Group's summed counters, as its StatsHandler serves them.
type Totals struct {
	Stats
	Processes int `json:"processes"`
}

// Totals returns the counters of every process of g so far (the children's
// as last reported, once a second), and how many processes have counted:
// this one and each child that reported.
func (g *Group) Totals() Totals {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.srv.Stats()
	for _, c := range g.children {
		s = s.Add(c)
	}
	return Totals{Stats: s, Processes: 1 + len(g.children)}
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
	// runCtx ends everything: the caller's stop, or a part that fails.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	served := make(chan error, 1)
	go func() { served <- g.srv.Serve(runCtx, ln) }()
	listening := make(chan struct{}) // closed once every child listens
	childrenDone := make(chan struct{})
	if g.Procs > 1 {
		go func() {
			defer close(childrenDone)
			if err := g.runChildren(runCtx, ln.Addr().String(), listening); err != nil {
				cancel(err)
			}
		}()
	} else {
		close(listening)
		close(childrenDone)
	}
	select {
	case <-listening:
		if runCtx.Err() == nil {
			ready(ln.Addr())
		}
	case <-runCtx.Done():
	}
	<-runCtx.Done()
	<-childrenDone
	var errs []error
	if err := <-served; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, net.ErrClosed) {
		errs = append(errs, err)
	}
	if cause := context.Cause(runCtx); len(errs) == 0 && ctx.Err() == nil {
		errs = append(errs, cause)
	}
	return errors.Join(errs...)
}

// runChildren runs Procs-1 children listening on addr until ctx ends,
// closing listening once they all listen, and returns the first failure.
func (g *Group) runChildren(ctx context.Context, addr string, listening chan<- struct{}) error {
	n := g.Procs - 1
	g.mu.Lock()
	g.children = make(map[int]Stats, n)
	g.mu.Unlock()
	fleet := childproc.Fleet[childConfig, Stats]{
		Command:      g.Command,
		Name:         func(i int) string { return fmt.Sprintf("sink process %d", i+2) },
		StartTimeout: g.StartTimeout,
		Lasting:      true,
		OnReady:      func(func(any)) { close(listening) },
		Receive: func(i int, s Stats) {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.children[i] = s
		},
	}
	err := fleet.Run(ctx, slices.Repeat([]childConfig{{Listen: addr, Echo: g.Echo}}, n))
	var notReady *childproc.ChildError
	var timeout *childproc.StartTimeoutError
	switch {
	case errors.As(err, &notReady) && errors.Is(notReady.Err, childproc.ErrExitedBeforeReady):
		return fmt.Errorf("%s exited before listening", notReady.Name)
	case errors.As(err, &timeout):
		return fmt.Errorf("children not listening after %v", timeout.Limit)
	}
	return err
}

func (g *Group) listen(ctx context.Context) (net.Listener, error) {
	if g.Procs > 1 {
		return ListenReusePort(ctx, "tcp", g.Listen)
	}
	var lc net.ListenConfig
	return lc.Listen(ctx, "tcp", g.Listen)
}
