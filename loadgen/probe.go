package loadgen

import (
	"context"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/safely"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// probeLoop runs the probe at once and then on every tick of ProbeEvery
// until ctx ends, and waits for the probe in flight, which ctx's end
// cancels.
//
// Ticks stay on their schedule whatever the probe does: a probe runs in a
// goroutine of its own. A tick that comes while the previous probe still
// runs is skipped and not counted: the probe in flight stands for it, and
// its latency (or its failure at ProbeTimeout) shows how late the answer
// is. So Probes counts probes that ran, never more than one at a time,
// the way a health loop would see them.
func (r *run) probeLoop(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	// idle holds a token while no probe runs.
	idle := make(chan struct{}, 1)
	idle <- struct{}{}
	launch := func() {
		select {
		case <-idle:
		default:
			return // the previous probe still runs: skip this tick
		}
		wg.Go(func() {
			defer func() { idle <- struct{}{} }()
			r.probeOnce(ctx)
		})
	}
	launch()
	t := time.NewTicker(r.cfg.ProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			launch()
		}
	}
}

// probeOnce runs one probe bounded by ProbeTimeout and records it, unless
// the run ended meanwhile: a probe cut short by the run's end says nothing
// about the path.
func (r *run) probeOnce(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, r.cfg.ProbeTimeout)
	defer cancel()
	start := time.Now()
	err := safely.Check(pctx, r.cfg.Probe, check.ErrPanicked)
	d := time.Since(start)
	if ctx.Err() != nil {
		return
	}
	r.c.probed(d, err)
}
