package childproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"
)

// defaultStartTimeout is Fleet.StartTimeout's zero value in force.
const defaultStartTimeout = 30 * time.Second

// A Fleet runs a command split over child processes, one per configuration
// of type C given to Run, each reporting messages with a payload of type M
// (see the package documentation). The zero value but Command is ready to
// use; Run may be called more than once.
type Fleet[C, M any] struct {
	// Command returns the command of one child, made with
	// exec.CommandContext(ctx, ...): the end of ctx stops it as Ctrl-C
	// would. Its Stderr is Command's to set. Required.
	Command func(ctx context.Context) *exec.Cmd
	// Name names child i (an index into Run's configurations) in errors,
	// "load process 1"; nil means "child 1".
	Name func(i int) string
	// StartTimeout bounds the wait for every child to be ready; zero
	// means 30 s.
	StartTimeout time.Duration
	// OnReady, when set, is called once every child is ready, with
	// broadcast, which writes v to every child as a JSON line. It is not
	// called when a child failed or Run's context ended first.
	OnReady func(broadcast func(v any))
	// Receive, when set, gets every payload child i reports, from the
	// goroutine that reads that child: calls for different children may
	// run at once.
	Receive func(i int, m M)
	// Lasting says the children serve until they are stopped: one that
	// exits before Run's context ends fails the fleet (ErrExited).
	// Otherwise a child exits when its work is done, and Run returns once
	// every child has.
	Lasting bool
	// KeepGoing says a child that fails once every child is ready leaves
	// the others running to the end of their work: each measures on its
	// own, and what they measured is kept. Run then returns every child's
	// failure, joined. A failure before that (a child that cannot start or
	// get ready) stops every child as always.
	KeepGoing bool
}

// Run starts a child for each of configs, sends it its configuration, and
// returns once every child it started has exited: nil when each did so
// cleanly or Run's context ended first, else the first failure, a
// *ChildError, a *StartTimeoutError or why a child could not be started.
// The first failure stops every other child, unless KeepGoing says otherwise.
func (fl Fleet[C, M]) Run(ctx context.Context, configs []C) error {
	// runCtx is every child's: its end, by ctx or by a failure, stops them.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &fleetRun[C, M]{fl: fl, ctx: runCtx, cancel: cancel, ready: make(chan struct{}, len(configs))}
	var watchers sync.WaitGroup
	procs := r.startAll(configs, &watchers)
	allReady := r.waitReady(len(procs))
	if allReady {
		r.setRunning()
	}
	if allReady && r.ctx.Err() == nil && fl.OnReady != nil {
		fl.OnReady(func(v any) {
			for _, p := range procs {
				_ = p.send(v)
			}
		})
	}
	watchers.Wait()
	return r.failure()
}

// fleetRun is the state of one Fleet.Run.
type fleetRun[C, M any] struct {
	fl     Fleet[C, M]
	ctx    context.Context
	cancel context.CancelCauseFunc
	ready  chan struct{} // one value per child that said it is ready

	mu      sync.Mutex
	err     error // the first failure
	running bool  // every child is ready
}

// setRunning records that every child is ready, unless the run failed or
// ended meanwhile: what fails from then on is KeepGoing's to let be.
func (r *fleetRun[C, M]) setRunning() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running = r.err == nil && r.ctx.Err() == nil
}

// startAll starts a child per config, sends it its config and watches it
// in a goroutine of watchers. It stops at the first child it cannot start,
// which fails the run, and returns the children it started.
func (r *fleetRun[C, M]) startAll(configs []C, watchers *sync.WaitGroup) []*process {
	procs := make([]*process, 0, len(configs))
	for i, c := range configs {
		p, err := start(r.fl.Command(r.ctx))
		if err != nil {
			r.fail(err)
			break
		}
		procs = append(procs, p)
		watchers.Go(func() { r.watch(i, p) })
		_ = p.send(c) // a child that cannot read it fails and says why
	}
	return procs
}

// waitReady waits until n children are ready and says whether they all
// are: false after a failure, the start timeout or the end of the run.
func (r *fleetRun[C, M]) waitReady(n int) bool {
	limit := r.fl.StartTimeout
	if limit <= 0 {
		limit = defaultStartTimeout
	}
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	for range n {
		select {
		case <-r.ready:
		case <-r.ctx.Done():
			return false
		case <-timeout.C:
			r.fail(&StartTimeoutError{Limit: limit})
			return false
		}
	}
	return r.ctx.Err() == nil
}

// watch reads child i's messages until it closes its stdout, then waits
// for it to exit, and fails the run with what went wrong with it.
func (r *fleetRun[C, M]) watch(i int, p *process) {
	ready := false
	for {
		var m Message[M]
		if err := p.next(&m); err != nil {
			if !errors.Is(err, io.EOF) {
				r.fail(r.childError(i, err))
			}
			break
		}
		switch {
		case m.Error != "":
			r.fail(r.childError(i, errors.New(m.Error)))
		case m.Ready && !ready:
			ready = true
			r.ready <- struct{}{} // buffered for every child
		case m.Data != nil && r.fl.Receive != nil:
			r.fl.Receive(i, *m.Data)
		}
	}
	err := p.wait()
	switch {
	case !ready:
		r.fail(r.childError(i, ErrExitedBeforeReady))
	case err != nil:
		r.fail(r.childError(i, err))
	case r.fl.Lasting:
		r.fail(r.childError(i, ErrExited))
	}
}

func (r *fleetRun[C, M]) childError(i int, err error) *ChildError {
	name := fmt.Sprintf("child %d", i+1)
	if r.fl.Name != nil {
		name = r.fl.Name(i)
	}
	return &ChildError{Index: i, Name: name, Err: err}
}

// fail records err as the run's failure and stops every child (with
// KeepGoing, only before they are all ready), unless the run has already
// failed or been stopped: what children do once they are told to stop
// (exit with a signal, say) is no failure of theirs.
func (r *fleetRun[C, M]) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	keepGoing := r.fl.KeepGoing && r.running
	switch {
	case r.ctx.Err() != nil:
	case keepGoing:
		r.err = errors.Join(r.err, err) // every child's, in the order they failed
	case r.err == nil:
		r.err = err
		r.cancel(err)
	}
}

func (r *fleetRun[C, M]) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
