package loadgen

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
)

// A Fleet runs one run split over child processes, each with its own limit
// of open files, that start at the same instant, and merges their results
// exactly (see Merge). A child is a program that calls [RunChild] with its
// stdin and stdout: tunnelprobe load runs itself that way.
type Fleet struct {
	// Command returns the command of one child, made with
	// exec.CommandContext(ctx, ...): the end of ctx stops it as Ctrl-C
	// would, so that it still reports what it measured. Required. Its
	// Stderr is Command's to set.
	Command func(ctx context.Context) *exec.Cmd
	// OnSecond, when set, gets each second of the run once every child
	// has reported it (or a later one is complete), summed over them.
	OnSecond func(Second)
	// OnWindowStart, when set, is called once the first child's measured
	// window has started (Config.OnWindowStart), and OnWindowEnd once
	// every child's has ended: the merged result's window starts with the
	// first and ends with the last. OnWindowEnd is never called when a
	// child ends without a window (it failed, or was stopped before it
	// started). Each is called once at most, from a goroutine reading a
	// child, the end after the start.
	OnWindowStart, OnWindowEnd func()
	// StartTimeout bounds the wait for every child to be ready; zero means
	// 30 s.
	StartTimeout time.Duration
}

// ChildReport is what a child reports to its parent: the start of its
// measured window, each second of its run, the window's end, then its
// result.
type ChildReport struct {
	Second *Second `json:"second,omitempty"`
	Window string  `json:"window,omitempty"` // WindowStarted or WindowEnded
	Result *Result `json:"result,omitempty"`
}

// The edges of a child's measured window, as a ChildReport tells them.
const (
	WindowStarted = "started"
	WindowEnded   = "ended"
)

// startLead is how far ahead of "now" the parent schedules the start of its
// children, so that the start line reaches every one of them before the
// instant it names.
const startLead = 100 * time.Millisecond

// Run runs c split over procs children (see ChildConfig.Split) and merges
// their results into one for c.Target with c.Conns requested. When ctx ends
// the children are stopped and what they measured is still merged; a child
// that fails once all are running leaves the others to finish their share,
// and what every child measured is merged.
func (fl Fleet) Run(ctx context.Context, c ChildConfig, procs int) (Result, error) {
	configs := c.Split(procs)
	merger := newSecondMerger(len(configs), fl.OnSecond)
	// results[i] is written by the goroutine reading child i only, and
	// read once Run, which waits for those goroutines, has returned.
	results := make([]*Result, len(configs))
	var windowsStarted, windowsEnded atomic.Int64
	started := false
	children := childproc.Fleet[ChildConfig, ChildReport]{
		Command:      fl.Command,
		Name:         func(i int) string { return fmt.Sprintf("load process %d", i+1) },
		StartTimeout: fl.StartTimeout,
		KeepGoing:    true, // each child measures on its own
		OnReady: func(broadcast func(any)) {
			started = true
			broadcast(time.Now().Add(startLead).UnixNano())
		},
		Receive: func(i int, r ChildReport) {
			if r.Second != nil {
				merger.add(*r.Second)
			}
			fl.window(r.Window, &windowsStarted, &windowsEnded, len(configs))
			if r.Result != nil {
				results[i] = r.Result
			}
		},
	}
	err := children.Run(ctx, configs)
	if timeout := (*childproc.StartTimeoutError)(nil); errors.As(err, &timeout) {
		err = fmt.Errorf("load processes not ready after %v", timeout.Limit)
	}
	if err != nil && !started {
		return Result{}, err
	}
	return mergeChildren(ctx, results, err, c.Target, c.Conns)
}

// window calls OnWindowStart for the first of n children whose window
// started (edge WindowStarted), OnWindowEnd for the last whose window
// ended, counting them in started and ended.
func (fl Fleet) window(edge string, started, ended *atomic.Int64, n int) {
	switch {
	case edge == WindowStarted && started.Add(1) == 1 && fl.OnWindowStart != nil:
		fl.OnWindowStart()
	case edge == WindowEnded && ended.Add(1) == int64(n) && fl.OnWindowEnd != nil:
		fl.OnWindowEnd()
	}
}

// mergeChildren merges the children's results into one for target, with
// the conns requested, and joins the fleet's error runErr with the names
// of the other children that reported no result.
func mergeChildren(ctx context.Context, results []*Result, runErr error, target string, conns int) (Result, error) {
	failed := failedChildren(runErr)
	var merge []Result
	errs := []error{runErr}
	for i, r := range results {
		switch {
		case r != nil:
			merge = append(merge, *r)
		case !failed[i]:
			errs = append(errs, fmt.Errorf("load process %d reported no result", i+1))
		}
	}
	if len(merge) == 0 {
		if ctx.Err() != nil {
			return Result{}, nil
		}
		return Result{}, errors.Join(append(errs, errors.New("no result from any load process"))...)
	}
	merged, err := Merge(merge...)
	if err != nil {
		return Result{}, err
	}
	merged.Target = target
	// Requested is what was asked for, also of a child that failed.
	merged.ConnsRequested = conns
	return merged, errors.Join(errs...)
}

// failedChildren returns the indexes of the children err says failed: one
// or, from a fleet that kept going, several joined.
func failedChildren(err error) map[int]bool {
	failed := map[int]bool{}
	var walk func(error)
	walk = func(err error) {
		if ce, ok := err.(*childproc.ChildError); ok {
			failed[ce.Index] = true
		}
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range joined.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return failed
}

// secondMerger adds up the seconds that n children report, for the
// progress line: a second is shown once every child has reported it, or
// once a later second is complete (a child that stopped reporting does not
// stall the line).
type secondMerger struct {
	mu      sync.Mutex
	n       int
	emit    func(Second)
	pending map[int64]*pendingSecond
	last    int64
}

type pendingSecond struct {
	sum     Second
	reports int
}

func newSecondMerger(n int, emit func(Second)) *secondMerger {
	return &secondMerger{n: n, emit: emit, pending: map[int64]*pendingSecond{}}
}

func (m *secondMerger) add(s Second) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.T <= m.last {
		return // already shown
	}
	p := m.pending[s.T]
	if p == nil {
		p = &pendingSecond{sum: Second{T: s.T}}
		m.pending[s.T] = p
	}
	p.sum.Add(s)
	p.reports++
	if p.reports < m.n {
		return
	}
	// s.T is complete: show it, and drop the older ones that never were.
	for t := range m.pending {
		if t <= s.T {
			delete(m.pending, t)
		}
	}
	m.last = s.T
	if m.emit != nil {
		m.emit(p.sum)
	}
}
