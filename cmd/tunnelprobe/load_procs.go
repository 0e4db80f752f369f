package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// childConfig returns the whole of a level of conns connections as the
// data children run, to be split over them.
func childConfig(f *loadFlags, p *loadPath, conns int) loadgen.ChildConfig {
	return loadgen.ChildConfig{
		Target: p.target, Conns: conns, ConnectRate: f.connectRate.v, Ramp: f.ramp, Duration: f.duration,
		Rate: f.rate.bits, Direction: f.direction, NoReconnect: !f.reconnect, Sources: f.sources.addrs,
		SOCKS5: p.childSOCKS5, Probe: p.childProbe, ProbeCAPEM: p.childCAPEM, ProbeInsecure: f.tlsInsecure,
		ProbeEvery: f.probeEvery, ProbeTimeout: f.probeTO,
	}
}

// runProcs runs one level of conns connections split over child processes
// (each given its share of childConfig as a JSON line on its stdin) that
// start at the same instant, and merges their results.
// The end of ctx stops the children as Ctrl-C would, and what they measured
// is still merged.
func runProcs(ctx context.Context, f *loadFlags, p *loadPath, conns int, onSecond func(loadgen.Second), stderr io.Writer) (loadgen.Result, error) {
	n := min(f.procs, conns)
	childCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	merger := newSecondMerger(n, onSecond)
	var readers sync.WaitGroup
	procs, startErr := startProcs(childCtx, childConfig(f, p, conns).Split(n), merger, &readers, stderr)
	if startErr == nil {
		startErr = waitReady(ctx, procs)
	}
	if startErr == nil && ctx.Err() == nil {
		start := time.Now().Add(startLead).UnixNano()
		for _, pr := range procs {
			// A child that cannot be told to start fails and says why.
			fmt.Fprintf(pr.c.stdin, "%d\n", start)
			pr.c.stdin.Close()
		}
	} else {
		cancel() // stop the children: SIGTERM
	}
	readers.Wait()
	for _, pr := range procs {
		if err := pr.c.wait(); err != nil && pr.err == nil && pr.result == nil {
			pr.err = fmt.Errorf("load process: %w", err)
		}
	}
	if startErr != nil {
		return loadgen.Result{}, startErr
	}
	return mergeProcs(ctx, procs, p.target, conns)
}

// proc is one child of runProcs.
type proc struct {
	c      *child
	ready  chan struct{} // closed when the child says it is ready
	done   chan struct{} // closed when its stdout ends
	result *loadgen.Result
	err    error
}

// startProcs starts a child for each of configs, tells it its config, and
// reads it in a goroutine of readers that feeds merger.
func startProcs(ctx context.Context, configs []loadgen.ChildConfig, merger *secondMerger, readers *sync.WaitGroup, stderr io.Writer) ([]*proc, error) {
	procs := make([]*proc, 0, len(configs))
	for i, cc := range configs {
		c, err := startChild(ctx, stderr, "load", childMode)
		if err != nil {
			return procs, err
		}
		pr := &proc{c: c, ready: make(chan struct{}), done: make(chan struct{})}
		procs = append(procs, pr)
		readers.Go(func() { pr.read(i, merger) })
		// A child that cannot read it fails and says why.
		_ = json.NewEncoder(c.stdin).Encode(cc)
	}
	return procs, nil
}

// read handles child i's messages until it closes its stdout.
func (pr *proc) read(i int, merger *secondMerger) {
	defer close(pr.done)
	readyClosed := false
	for {
		m, err := pr.c.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				pr.err = err
			}
			return
		}
		switch {
		case m.Ready && !readyClosed:
			readyClosed = true
			close(pr.ready)
		case m.Second != nil:
			merger.add(*m.Second)
		case m.Result != nil:
			pr.result = m.Result
		case m.Error != "":
			pr.err = fmt.Errorf("load process %d: %s", i+1, m.Error)
		}
	}
}

// waitReady waits until every child is ready, so that they can all be
// given one start time; nil also when ctx ended first.
func waitReady(ctx context.Context, procs []*proc) error {
	timeout := time.NewTimer(childStartTimeout)
	defer timeout.Stop()
	for i, pr := range procs {
		select {
		case <-pr.ready:
		case <-pr.done:
			return fmt.Errorf("load process %d exited before it was ready", i+1)
		case <-timeout.C:
			return fmt.Errorf("load processes not ready after %v", childStartTimeout)
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// mergeProcs merges the children's results into one for target, with the
// conns requested, and joins their errors.
func mergeProcs(ctx context.Context, procs []*proc, target string, conns int) (loadgen.Result, error) {
	var results []loadgen.Result
	var errs []error
	for i, pr := range procs {
		switch {
		case pr.err != nil:
			errs = append(errs, pr.err)
		case pr.result == nil:
			errs = append(errs, fmt.Errorf("load process %d reported no result", i+1))
		}
		if pr.result != nil {
			results = append(results, *pr.result)
		}
	}
	if len(results) == 0 {
		if ctx.Err() != nil {
			return loadgen.Result{}, nil
		}
		return loadgen.Result{}, errors.Join(append(errs, errors.New("no result from any load process"))...)
	}
	merged, err := loadgen.Merge(results...)
	if err != nil {
		return loadgen.Result{}, err
	}
	merged.Target = target
	// Requested is what was asked for, also of a child that failed.
	merged.ConnsRequested = conns
	return merged, errors.Join(errs...)
}

// loadChild is a load process started by a --procs parent. It reads its
// share of the run (a loadgen.ChildConfig) from its first line on stdin,
// says it is ready, waits for the start time its parent writes next, runs,
// and reports each second and its result in JSON lines on stdout.
func loadChild(ctx context.Context, stdout io.Writer) int {
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	send := func(m childMsg) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(m) // a parent that went away has no use for it
	}
	// Stdin is read in a goroutine so that a signal ends the waits. It
	// ends when the parent closes the pipe, at the latest when the
	// process exits.
	lines := make(chan string, 2)
	go func() {
		defer close(lines)
		in := bufio.NewReader(os.Stdin)
		for range 2 {
			s, err := in.ReadString('\n')
			if err != nil {
				return
			}
			lines <- s
		}
	}()
	var cc loadgen.ChildConfig
	select {
	case s := <-lines:
		if err := json.Unmarshal([]byte(s), &cc); err != nil {
			send(childMsg{Error: "no configuration from the parent: " + err.Error()})
			return 1
		}
	case <-ctx.Done():
		return 0
	}
	cfg, err := cc.Build()
	if err != nil {
		send(childMsg{Error: err.Error()})
		return 1
	}
	send(childMsg{Ready: true})

	var startAt time.Time
	select {
	case s := <-lines:
		ns, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			send(childMsg{Error: "no start time from the parent"})
			return 1
		}
		startAt = time.Unix(0, ns)
	case <-ctx.Done():
		send(childMsg{Result: emptyResult(cfg)})
		return 0
	}
	t := time.NewTimer(time.Until(startAt))
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		send(childMsg{Result: emptyResult(cfg)})
		return 0
	}

	cfg.OnSecond = func(s loadgen.Second) { send(childMsg{Second: &s}) }
	res, err := loadgen.Run(ctx, cfg)
	if err != nil {
		send(childMsg{Error: err.Error()})
		return 1
	}
	send(childMsg{Result: &res})
	return 0
}

// emptyResult is the result of a child stopped before it started.
func emptyResult(cfg loadgen.Config) *loadgen.Result {
	return &loadgen.Result{
		Target: cfg.Target, Path: cfg.PathName, Start: time.Now(), Processes: 1, Interrupted: true,
		ConnsRequested: cfg.Conns, Errors: map[string]int64{},
		Histograms: loadgen.Histograms{Connect: loadgen.NewLatencyHistogram().Export(), Probe: loadgen.NewLatencyHistogram().Export()},
	}
}

// secondMerger adds up the seconds that n children report, for the
// progress line: a second is shown once every child has reported it, or
// once a later second is complete (a child that stopped reporting does not
// stall the line).
type secondMerger struct {
	mu      sync.Mutex
	n       int
	emit    func(loadgen.Second)
	pending map[int64]*pendingSecond
	last    int64
}

type pendingSecond struct {
	sum     loadgen.Second
	reports int
}

func newSecondMerger(n int, emit func(loadgen.Second)) *secondMerger {
	return &secondMerger{n: n, emit: emit, pending: map[int64]*pendingSecond{}}
}

func (m *secondMerger) add(s loadgen.Second) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.T <= m.last {
		return // already shown
	}
	p := m.pending[s.T]
	if p == nil {
		p = &pendingSecond{sum: loadgen.Second{T: s.T}}
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
