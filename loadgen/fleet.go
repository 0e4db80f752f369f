package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
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
	// StartTimeout bounds the wait for every child to be ready; zero means
	// 30 s.
	StartTimeout time.Duration
}

// ChildMessage is a line a child writes to its parent, in JSON.
type ChildMessage struct {
	// Ready says the child is set up and waits for its start time.
	Ready bool `json:"ready,omitempty"`
	// Second is the child's report of one second of its run.
	Second *Second `json:"second,omitempty"`
	// Result is the child's final result.
	Result *Result `json:"result,omitempty"`
	// Error is why the child gives up.
	Error string `json:"error,omitempty"`
}

// startLead is how far ahead of "now" the parent schedules the start of its
// children, so that the start line reaches every one of them before the
// instant it names.
const startLead = 100 * time.Millisecond

// Run runs c split over procs children (see ChildConfig.Split) and merges
// their results into one for c.Target with c.Conns requested. When ctx ends
// the children are stopped and what they measured is still merged.
func (fl Fleet) Run(ctx context.Context, c ChildConfig, procs int) (Result, error) {
	configs := c.Split(procs)
	childCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	merger := newSecondMerger(len(configs), fl.OnSecond)
	var readers sync.WaitGroup
	children, startErr := fl.start(childCtx, configs, merger, &readers)
	if startErr == nil {
		startErr = fl.waitReady(ctx, children)
	}
	if startErr == nil && ctx.Err() == nil {
		start := time.Now().Add(startLead).UnixNano()
		for _, ch := range children {
			// A child that cannot be told to start fails and says why.
			fmt.Fprintf(ch.c.Stdin, "%d\n", start)
			ch.c.Stdin.Close()
		}
	} else {
		cancel() // stop the children: SIGTERM
	}
	readers.Wait()
	for _, ch := range children {
		if err := ch.c.Wait(); err != nil && ch.err == nil && ch.result == nil {
			ch.err = fmt.Errorf("load process: %w", err)
		}
	}
	if startErr != nil {
		return Result{}, startErr
	}
	return mergeChildren(ctx, children, c.Target, c.Conns)
}

// fleetChild is one child of a Fleet.
type fleetChild struct {
	c      *childproc.Child
	ready  chan struct{} // closed when the child says it is ready
	done   chan struct{} // closed when its stdout ends
	result *Result
	err    error
}

// start starts a child for each of configs, tells it its config, and reads
// it in a goroutine of readers that feeds merger.
func (fl Fleet) start(ctx context.Context, configs []ChildConfig, merger *secondMerger, readers *sync.WaitGroup) ([]*fleetChild, error) {
	children := make([]*fleetChild, 0, len(configs))
	for i, cc := range configs {
		c, err := childproc.Start(fl.Command(ctx))
		if err != nil {
			return children, err
		}
		ch := &fleetChild{c: c, ready: make(chan struct{}), done: make(chan struct{})}
		children = append(children, ch)
		readers.Go(func() { ch.read(i, merger) })
		// A child that cannot read it fails and says why.
		_ = c.Send(cc)
	}
	return children, nil
}

// read handles child i's messages until it closes its stdout.
func (ch *fleetChild) read(i int, merger *secondMerger) {
	defer close(ch.done)
	readyClosed := false
	for {
		var m ChildMessage
		if err := ch.c.Next(&m); err != nil {
			if !errors.Is(err, io.EOF) {
				ch.err = err
			}
			return
		}
		switch {
		case m.Ready && !readyClosed:
			readyClosed = true
			close(ch.ready)
		case m.Second != nil:
			merger.add(*m.Second)
		case m.Result != nil:
			ch.result = m.Result
		case m.Error != "":
			ch.err = fmt.Errorf("load process %d: %s", i+1, m.Error)
		}
	}
}

// waitReady waits until every child is ready, so that they can all be
// given one start time; nil also when ctx ended first.
func (fl Fleet) waitReady(ctx context.Context, children []*fleetChild) error {
	limit := fl.StartTimeout
	if limit <= 0 {
		limit = 30 * time.Second
	}
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	for i, ch := range children {
		select {
		case <-ch.ready:
		case <-ch.done:
			return fmt.Errorf("load process %d exited before it was ready", i+1)
		case <-timeout.C:
			return fmt.Errorf("load processes not ready after %v", limit)
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// mergeChildren merges the children's results into one for target, with
// the conns requested, and joins their errors.
func mergeChildren(ctx context.Context, children []*fleetChild, target string, conns int) (Result, error) {
	var results []Result
	var errs []error
	for i, ch := range children {
		switch {
		case ch.err != nil:
			errs = append(errs, ch.err)
		case ch.result == nil:
			errs = append(errs, fmt.Errorf("load process %d reported no result", i+1))
		}
		if ch.result != nil {
			results = append(results, *ch.result)
		}
	}
	if len(results) == 0 {
		if ctx.Err() != nil {
			return Result{}, nil
		}
		return Result{}, errors.Join(append(errs, errors.New("no result from any load process"))...)
	}
	merged, err := Merge(results...)
	if err != nil {
		return Result{}, err
	}
	merged.Target = target
	// Requested is what was asked for, also of a child that failed.
	merged.ConnsRequested = conns
	return merged, errors.Join(errs...)
}

// RunChild is the child side of a Fleet: it reads its share of the run (a
// ChildConfig) from its first line on stdin, says it is ready, waits for the
// start time its parent writes next, runs, and reports each second and its
// result as ChildMessages on stdout. It returns an error when it could not
// run; a run stopped by ctx still reports what it measured. stdin is read
// in a goroutine, so that ctx can end the waits; when RunChild returns
// before stdin ends, that goroutine ends with stdin (in a child process:
// when the parent closes the pipe, or the process exits).
func RunChild(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	send := func(m ChildMessage) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(m) // a parent that went away has no use for it
	}
	fail := func(err error) error {
		send(ChildMessage{Error: err.Error()})
		return err
	}
	// Stdin is read in a goroutine so that the end of ctx ends the waits.
	// The goroutine ends when the parent closes the pipe, at the latest
	// when the process exits.
	lines := make(chan string, 2)
	go func() {
		defer close(lines)
		in := bufio.NewReader(stdin)
		for range 2 {
			s, err := in.ReadString('\n')
			if err != nil {
				return
			}
			lines <- s
		}
	}()
	var cc ChildConfig
	select {
	case s := <-lines:
		if err := json.Unmarshal([]byte(s), &cc); err != nil {
			return fail(fmt.Errorf("no configuration from the parent: %w", err))
		}
	case <-ctx.Done():
		return nil
	}
	cfg, err := cc.Build()
	if err != nil {
		return fail(err)
	}
	send(ChildMessage{Ready: true})

	var startAt time.Time
	select {
	case s := <-lines:
		ns, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fail(errors.New("no start time from the parent"))
		}
		startAt = time.Unix(0, ns)
	case <-ctx.Done():
		send(ChildMessage{Result: emptyResult(cfg)})
		return nil
	}
	t := time.NewTimer(time.Until(startAt))
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		send(ChildMessage{Result: emptyResult(cfg)})
		return nil
	}
	cfg.OnSecond = func(s Second) { send(ChildMessage{Second: &s}) }
	res, err := Run(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	send(ChildMessage{Result: &res})
	return nil
}

// emptyResult is the result of a child stopped before it started.
func emptyResult(cfg Config) *Result {
	return &Result{
		Target: cfg.Target, Path: cfg.PathName, Start: time.Now(), Processes: 1, Interrupted: true,
		ConnsRequested: cfg.Conns, Errors: map[string]int64{},
		Histograms: Histograms{Connect: NewLatencyHistogram().Export(), Probe: NewLatencyHistogram().Export()},
	}
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
