package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// childArgs returns the command line of child i, which runs share of the
// conns connections: rates are split in proportion, and only the first
// child probes, so that the path sees one probe at a time as with one
// process.
func childArgs(f *loadFlags, p *loadPath, i, share, conns int) []string {
	frac := float64(share) / float64(conns)
	args := []string{"load", childMode,
		"--target", p.target,
		"--conns", strconv.Itoa(share),
		"--duration", f.duration.String(),
		"--direction", f.direction.String(),
		"--reconnect=" + strconv.FormatBool(f.reconnect),
		"--probe-every", f.probeEvery.String(),
		"--probe-timeout", f.probeTO.String(),
	}
	if f.connectRate.v > 0 {
		args = append(args, "--connect-rate", strconv.FormatFloat(f.connectRate.v*frac, 'g', -1, 64))
	}
	if f.ramp > 0 {
		args = append(args, "--ramp", f.ramp.String())
	}
	if f.rate.bits > 0 {
		args = append(args, "--rate", strconv.FormatFloat(max(1, math.Round(f.rate.bits*frac)), 'f', 0, 64))
	}
	if f.sources.text != "" {
		args = append(args, "--source", f.sources.text)
	}
	if p.childSOCKS5 != "" {
		args = append(args, "--socks5", p.childSOCKS5)
	}
	if i == 0 && p.childProbe != "" {
		args = append(args, "--probe", p.childProbe)
		switch {
		case f.tlsCA.file != "":
			args = append(args, "--tls-ca", f.tlsCA.file)
		case p.childCAFile != "":
			args = append(args, "--tls-ca", p.childCAFile)
		}
		if f.tlsInsecure {
			args = append(args, "--tls-insecure")
		}
	}
	return args
}

// runProcs runs one level of conns connections split over child processes
// (see childArgs) that start at the same instant, and merges their results.
// The end of ctx stops the children as Ctrl-C would, and what they measured
// is still merged.
func runProcs(ctx context.Context, f *loadFlags, p *loadPath, conns int, onSecond func(loadgen.Second), stderr io.Writer) (loadgen.Result, error) {
	n := min(f.procs, conns)
	childCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	merger := newSecondMerger(n, onSecond)
	var readers sync.WaitGroup
	procs, startErr := startProcs(childCtx, f, p, n, conns, merger, &readers, stderr)
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

// startProcs starts n children, child i with its share of conns, each
// read by a goroutine of readers that feeds merger.
func startProcs(ctx context.Context, f *loadFlags, p *loadPath, n, conns int, merger *secondMerger, readers *sync.WaitGroup, stderr io.Writer) ([]*proc, error) {
	procs := make([]*proc, 0, n)
	for i := range n {
		share := conns / n
		if i < conns%n {
			share++
		}
		c, err := startChild(ctx, stderr, childArgs(f, p, i, share, conns)...)
		if err != nil {
			return procs, err
		}
		pr := &proc{c: c, ready: make(chan struct{}), done: make(chan struct{})}
		procs = append(procs, pr)
		readers.Go(func() { pr.read(i, merger) })
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

// loadChild is a load process started by a --procs parent. It says it is
// ready, waits for the start time its parent writes on stdin, runs, and
// reports each second and its result in JSON lines on stdout.
func loadChild(ctx context.Context, f *loadFlags, stdout, stderr io.Writer) int {
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	send := func(m childMsg) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(m) // a parent that went away has no use for it
	}
	path, err := openPath(ctx, f, harness.Settings{})
	if err != nil {
		send(childMsg{Error: err.Error()})
		return 1
	}
	defer path.close()
	cfg := f.buildConfig(path, f.conns)
	if err := cfg.Validate(); err != nil {
		send(childMsg{Error: err.Error()})
		return 1
	}
	send(childMsg{Ready: true})

	// Stdin is read in a goroutine so that a signal ends the wait. It
	// ends when the parent writes the line or closes the pipe, at the
	// latest when the process exits.
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		line <- s
	}()
	var startAt time.Time
	select {
	case s := <-line:
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
