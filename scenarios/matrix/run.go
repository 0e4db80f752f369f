package matrix

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"

	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

// SaturatedCPU is the machine's CPU use above which a run is marked
// saturated: its processes were starved, so checks may look slow for the
// wrong reason.
const SaturatedCPU = 0.9

// Options configure Run.
type Options struct {
	// Options are each run's.
	scenarios.Options
	// Repeat is how many passes over the conditions to make, each with its
	// own seed; zero means one.
	Repeat int
	// Seed is the first pass's seed, and each later pass's the one after;
	// zero keeps each condition's own seed for the first pass.
	Seed uint64
	// Shard, when its Count is set, runs only this machine's share of the
	// runs (see Shard); Merge adds the shards up.
	Shard Shard
	// OnRun, when set, is called after each run, with the runs so far.
	OnRun func(RunReport)
	// Log, when set, receives a line as each run starts: which run of how
	// many, and an estimate of the time left. Each run's progress lines
	// (Options.Progress) start with the same.
	Log io.Writer

	// run runs one condition: Run, unless a test replaces it.
	run func(context.Context, scenarios.Spec, scenarios.Options) (*scenarios.Report, error)
	// cpuTimes reads the machine's CPU times: gopsutil's, unless a test
	// replaces it.
	cpuTimes func() (busy, total float64, err error)
	// now is the wall clock, for the estimate: time.Now unless a test
	// replaces it.
	now func() time.Time
}

// A Shard is one machine's share of a matrix: of the runs the whole
// matrix makes (each pass over the conditions in order, pass after pass),
// the ones whose place k (from 0) has k mod Count == Index. Every run keeps
// the seed it has in the whole matrix, so that the shards' runs, merged,
// are the whole matrix's. The zero Shard is the whole matrix.
type Shard struct{ Index, Count int }

// ParseShard reads "i/n": shard i (from 0) of n, as a Kubernetes Indexed
// Job numbers its pods.
func ParseShard(s string) (Shard, error) {
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.Index, &sh.Count); err != nil || fmt.Sprintf("%d/%d", sh.Index, sh.Count) != s {
		return Shard{}, fmt.Errorf("%q is not i/n, such as 0/4", s)
	}
	if sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return Shard{}, fmt.Errorf("shard %d of %d: want n at least 1 and i from 0 to n-1", sh.Index, sh.Count)
	}
	return sh, nil
}

// has reports whether run k (from 0) of the whole matrix is the shard's.
func (s Shard) has(k int) bool { return s.Count == 0 || k%s.Count == s.Index }

// String is "i/n", or "" for the whole matrix.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// timeLeft estimates how long runs lasting remaining in all take, from
// the runs so far: done of run time took wall of real time (labs to start,
// reports to write). Before the first, remaining is the least it takes.
func timeLeft(remaining, done, wall time.Duration) time.Duration {
	if done <= 0 || wall <= done {
		return remaining
	}
	return time.Duration(float64(remaining) * float64(wall) / float64(done))
}

// A RunReport is one run of one condition.
type RunReport struct {
	Condition string `json:"condition"`
	Pass      int    `json:"pass"` // from 1
	Seed      uint64 `json:"seed"`
	// CPU is the share of the machine's CPU time (every core) that was busy
	// during the run; Saturated is CPU above SaturatedCPU.
	CPU       float64           `json:"cpu"`
	Saturated bool              `json:"saturated"`
	Report    *scenarios.Report `json:"report"`
}

// MaxRepeat bounds a matrix's passes: every run's report, timelines
// included, stays in memory until the matrix ends, and gets a folder of
// its own in the results.
const MaxRepeat = 1_000

// MinDuration returns how long Run takes at least to make passes over
// conditions: their durations, each run taking a few seconds more to start
// its labs. An error says why the matrix is refused: more passes than
// MaxRepeat, or more time than MaxDuration.
func MinDuration(conditions []scenarios.Spec, passes int) (time.Duration, error) {
	if passes > MaxRepeat {
		return 0, fmt.Errorf("%d passes, at most %d", passes, MaxRepeat)
	}
	var pass time.Duration
	for _, c := range conditions {
		if pass += min(c.Duration.Duration, scenarios.MaxDuration+1); pass > scenarios.MaxDuration {
			break // too long already; the sum cannot overflow
		}
	}
	if pass > scenarios.MaxDuration || pass > 0 && passes > int(scenarios.MaxDuration/pass) {
		return 0, fmt.Errorf("%d passes of %v take %.1f days at least, more than the %.0f days a command may take",
			passes, pass, float64(passes)*pass.Hours()/24, scenarios.MaxDuration.Hours()/24)
	}
	return time.Duration(passes) * pass, nil
}

// Run runs each condition Repeat times, one run at a time, and
// gathers the rates over every run. When ctx ends it stops after the run
// under way, which is kept but marked interrupted and left out of the
// rates, and returns the report of what was measured, marked Interrupted.
// An error is a run that failed; the report then holds the runs before it.
func Run(ctx context.Context, conditions []scenarios.Spec, opt Options) (*Report, error) {
	if opt.run == nil {
		opt.run = scenarios.Run
	}
	if opt.cpuTimes == nil {
		opt.cpuTimes = machineCPUTimes
	}
	if opt.now == nil {
		opt.now = time.Now
	}
	passes := max(opt.Repeat, 1)
	rep := newReport(conditions, passes)
	defer rep.finish()
	rep.Shard = opt.Shard.String()
	start := opt.now()
	var done, remaining time.Duration // run time done, and to do
	k, total := 0, 0                  // the run in the whole matrix, and this shard's count
	for range passes {
		for _, c := range conditions {
			if opt.Shard.has(k) {
				remaining += c.Duration.Duration
				total++
			}
			k++
		}
	}
	k = 0
	for pass := 1; pass <= passes; pass++ {
		for _, c := range conditions {
			k++
			if !opt.Shard.has(k - 1) {
				continue
			}
			if ctx.Err() != nil {
				rep.Interrupted = true
				return rep, nil
			}
			spec := c
			if opt.Seed != 0 {
				spec.Seed = opt.Seed
			}
			spec.Seed += uint64(pass - 1)
			left := timeLeft(remaining, done, opt.now().Sub(start)).Round(time.Second)
			if opt.Log != nil {
				fmt.Fprintf(opt.Log, "run %d of %d: %s, seed %d (about %v left)\n", len(rep.Runs)+1, total, spec.Name, spec.Seed, left)
			}
			runOpts := opt.Options
			runOpts.ProgressPrefix = fmt.Sprintf("run %d/%d, ~%v left ", len(rep.Runs)+1, total, left)
			busy0, total0, cpuErr := opt.cpuTimes()
			r, err := opt.run(ctx, spec, runOpts)
			done, remaining = done+spec.Duration.Duration, remaining-spec.Duration.Duration
			if err != nil {
				if ctx.Err() != nil { // stopped while its labs started: nothing of it measured
					if opt.Log != nil {
						fmt.Fprintf(opt.Log, "run %d: interrupted while its labs started (%v)\n", len(rep.Runs)+1, err)
					}
					rep.Interrupted = true
					return rep, nil
				}
				return rep, fmt.Errorf("%s, seed %d: %w", spec.Name, spec.Seed, err)
			}
			run := RunReport{Condition: spec.Name, Pass: pass, Seed: spec.Seed, Report: r}
			if busy1, total1, err := opt.cpuTimes(); err == nil && cpuErr == nil && total1 > total0 {
				run.CPU = (busy1 - busy0) / (total1 - total0)
				run.Saturated = run.CPU > SaturatedCPU
			}
			rep.add(run)
			if opt.OnRun != nil {
				opt.OnRun(run)
			}
			if r.Interrupted {
				rep.Interrupted = true
				return rep, nil
			}
		}
	}
	return rep, nil
}

// machineCPUTimes returns the machine's busy and total CPU seconds since
// boot, over every core.
func machineCPUTimes() (busy, total float64, err error) {
	ts, err := cpu.Times(false)
	if err != nil || len(ts) == 0 {
		return 0, 0, fmt.Errorf("cpu times: %v", err)
	}
	t := ts[0]
	// Guest time is already in User on Linux.
	total = t.User + t.System + t.Nice + t.Idle + t.Iowait + t.Irq + t.Softirq + t.Steal
	return total - t.Idle - t.Iowait, total, nil
}
