package scenarios

import (
	"context"
	"time"
)

// stallTick is how often watchStalls sets its timer: fine enough to see a
// stall that can cost a probe (the shortest probe timeout is a second),
// cheap enough to cost nothing.
const stallTick = 100 * time.Millisecond

// stallWorthSaying is the stall from which a report says the machine, not
// the tunnel, may explain its timings: half the shortest probe timeout.
const stallWorthSaying = 500 * time.Millisecond

// watchStalls returns, once ctx ends, the longest time its timer fired
// late: how long the process could not run. A busy CI machine can hold a
// process for seconds (beside the container suite, a 6 s run once recorded
// no probe and ended 10 s late), and a run whose probes were held that
// long measured the machine, not the tunnel: the report says so instead
// of leaving it to guesswork.
func watchStalls(ctx context.Context) time.Duration {
	var longest time.Duration
	timer := time.NewTimer(stallTick)
	defer timer.Stop()
	due := time.Now().Add(stallTick)
	for {
		select {
		case <-ctx.Done():
			return longest
		case <-timer.C:
		}
		now := time.Now()
		longest = max(longest, now.Sub(due))
		due = now.Add(stallTick)
		timer.Reset(stallTick)
	}
}

// Stalled reports whether the process could not run for long enough
// (stallWorthSaying) that the run's timings may be the machine's.
func (r *Report) Stalled() bool { return r.StalledSeconds >= stallWorthSaying.Seconds() }
