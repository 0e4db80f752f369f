package scenarios

import (
	"context"
	"io"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/peakrss"
)

// Options tune a run without changing what it measures.
type Options struct {
	// Progress, when set, receives a progress line every ProgressEvery.
	Progress io.Writer
	// ProgressEvery is the progress period; zero means 5 s.
	ProgressEvery time.Duration
	// ProgressPrefix starts each progress line (a matrix says which run
	// of how many, and the time left).
	ProgressPrefix string
	// Buffers are the labs' netstack TCP buffers; zero means
	// harness.BuffersFor the link's fastest rate and the load's
	// connections: small ones, which let seven labs carry thousands of
	// flows each.
	Buffers harness.Buffers
}

// Run runs every configuration of spec on its own lab, side by side, for
// spec.Duration, and returns what they measured. When ctx ends early it
// returns the report of what was measured so far, marked Interrupted. A
// configuration that was not measured (its prober never probed, or its
// load never connected) is marked Failed in the report, not an error: the
// others' figures stand.
func Run(ctx context.Context, spec Spec, opt Options) (*Report, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if opt.Buffers == (harness.Buffers{}) {
		opt.Buffers = harness.BuffersFor(spec.Link.fastest(), spec.Link.Delay.Duration, spec.Load.Conns)
	}
	trials := make([]*trial, 0, len(spec.Configs))
	defer func() {
		for _, t := range trials {
			t.close()
		}
	}()
	for i, c := range spec.Configs {
		t, err := newTrial(ctx, spec, c, i, opt.Buffers)
		if err != nil {
			return nil, err
		}
		trials = append(trials, t)
	}

	start := time.Now()
	runCtx, cancel := context.WithDeadline(ctx, start.Add(spec.Duration.Duration))
	defer cancel()
	// A Ctrl-C (ctx ending) cuts the run where it came, not after the
	// teardown that follows: an outage due in between never began.
	stopped := make(chan time.Duration, 1)
	stopWatch := context.AfterFunc(ctx, func() { stopped <- time.Since(start) })
	defer stopWatch() // on an error return
	g, gctx := errgroup.WithContext(runCtx)
	for _, t := range trials {
		t.start, t.rec = start, newRecorder(start)
		g.Go(func() error { return t.run(gctx) })
	}
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		progress(gctx, opt, spec, start, trials)
	}()
	stalled := make(chan time.Duration, 1)
	go func() { stalled <- watchStalls(gctx) }()
	err := g.Wait()
	cancel()
	<-progressDone
	stall := <-stalled
	interrupted, elapsed := false, time.Since(start)
	if !stopWatch() { // ctx ended: when?
		if at := <-stopped; at < spec.Duration.Duration {
			interrupted, elapsed = true, at
			stall = min(stall, at) // a timer it handled after the stop
		}
	}
	// A trial that failed once the run was stopped failed of the stop (a
	// Ctrl-C reaches the terminal's openvpn too): the run is an
	// interrupted one, its measurements kept.
	if err != nil && !interrupted {
		return nil, err
	}
	rep := &Report{
		Name:            spec.Name,
		Seed:            spec.Seed,
		Started:         start,
		DurationSeconds: elapsed.Seconds(),
		Interrupted:     interrupted,
		PeakRSSBytes:    peakrss.Bytes(),
		StalledSeconds:  stall.Seconds(),
		Spec:            spec,
		Configs:         map[string]ConfigReport{},
	}
	for _, t := range trials {
		rep.Configs[t.cfg.Name] = rep.measureTrial(t, elapsed, stall)
		rep.Order = append(rep.Order, t.cfg.Name)
	}
	return rep, nil
}

// measureTrial returns the figures of trial t in rep's run, which ran for
// elapsed (as rep.ran says) and stalled up to stall.
func (rep *Report) measureTrial(t *trial, elapsed, stall time.Duration) ConfigReport {
	tl := t.rec.timeline()
	w := t.window
	w.delivered = t.delivered
	cr := measure(rep.ran(), t.cfg, tl, t.load, t.start, w)
	if t.loadErr != nil {
		cr.LoadError = t.loadErr.Error()
	}
	if rep.Interrupted {
		cr.leaveCutOutagesUnjudged(rep.DurationSeconds)
	}
	cr.Failed = failure(rep.Spec, t.cfg, tl, t.load, t.loadErr, elapsed, rep.Interrupted, stall)
	cr.Breaches = t.cfg.Expect.breaches(cr, rep.Interrupted)
	return cr
}
