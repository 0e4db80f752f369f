package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// progress writes progressLine every period until ctx ends.
func progress(ctx context.Context, opt Options, spec Spec, start time.Time, trials []*trial) {
	if opt.Progress == nil {
		return
	}
	every := opt.ProgressEvery
	if every <= 0 {
		every = 5 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		names := make([]string, len(trials))
		timelines := make([]Timeline, len(trials))
		for i, t := range trials {
			names[i], timelines[i] = t.cfg.Name, t.rec.timeline()
		}
		fmt.Fprintln(opt.Progress, opt.ProgressPrefix+progressLine(spec, time.Since(start), names, timelines))
	}
}

// progressLine says, at elapsed into the run, what the table will count:
// the restarts and heals of each configuration while the link worked (false
// ones: blips aside), and, once an outage began, who acted on it and how
// fast. Configurations with nothing to report are left out, so the line
// stays short: "[  45s/360s loaded] false restarts/heals: none".
func progressLine(spec Spec, elapsed time.Duration, names []string, timelines []Timeline) string {
	elapsed = elapsed.Truncate(time.Second)
	phase := "loaded"
	var outage *Window // the latest non-blip outage that has begun
	for i, w := range spec.Link.Outages {
		if elapsed >= w.Start.Duration && elapsed < w.End() {
			phase = "OUTAGE"
			if w.Blip {
				phase = "blip"
			}
		}
		if !w.Blip && elapsed >= w.Start.Duration {
			outage = &spec.Link.Outages[i]
		}
	}
	working := spec.workingTime()
	var falseActions, acted []string
	for i, tl := range timelines {
		restarts, heals := countIf(tl.Restarts, working.holds), countIf(tl.Heals, working.holds)
		if restarts+heals > 0 {
			falseActions = append(falseActions, fmt.Sprintf("%s %d/%d", names[i], restarts, heals))
		}
		if outage == nil {
			continue
		}
		actions := slices.Concat(tl.Restarts, tl.Heals)
		slices.Sort(actions)
		for _, a := range actions {
			if float64(a) >= outage.Start.Seconds() && float64(a) < outage.End().Seconds() {
				acted = append(acted, fmt.Sprintf("%s %.0fs", names[i], float64(a)-outage.Start.Seconds()))
				break
			}
		}
	}
	line := fmt.Sprintf("[%4.0fs/%.0fs %s] false restarts/heals: ", elapsed.Seconds(), spec.Duration.Seconds(), phase)
	if len(falseActions) == 0 {
		line += "none"
	} else {
		line += strings.Join(falseActions, ", ")
	}
	if outage != nil {
		line += " | acted on the outage: "
		if len(acted) == 0 {
			line += "none yet"
		} else {
			line += strings.Join(acted, ", ")
		}
	}
	return line
}
