package loadgen

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// A Sweep runs levels of connection counts one after the other, the same
// run described as data (Config) at each count, each level in this process
// or split over child processes (a [Fleet]). It stops after a level that
// failed or was interrupted, so that a sweep stopped by Ctrl-C still
// returns every level measured so far. tunnelprobe load runs one level
// without --sweep, one per count with it.
type Sweep struct {
	// Config is the run of every level; each level replaces its Conns.
	Config ChildConfig
	// Levels are the connection counts of the levels, in the order they
	// run; empty means one level of Config.Conns.
	Levels []int
	// Procs is the count of processes a level of more than one
	// connection is split over (Fleet.Run); 1 or less runs every level in
	// this process.
	Procs int
	// Command returns the command of one child (Fleet.Command). Required
	// when Procs > 1.
	Command func(ctx context.Context) *exec.Cmd
	// Dialer is what this process dials through (ChildConfig.BuildOver);
	// nil means the host network, or Config.SOCKS5. Children build their
	// own from Config.
	Dialer check.Dialer

	// OnStart, when set, is called before level i (from 0) runs c, the
	// level's Config. It returns the level's OnSecond (Config.OnSecond,
	// Fleet.OnSecond), or nil: that is called from the level's own
	// goroutines, one second at a time, and never after the level ends, so
	// OnEnd may use what it touched without a lock of its own.
	OnStart func(i int, c ChildConfig) (onSecond func(Second))
	// OnWindowStart and OnWindowEnd, when set, are called as level i's
	// measured window starts and ends, before its connections' end-of-run
	// handshake (Config.OnWindowStart and OnWindowEnd; over children,
	// Fleet's), from the level's goroutines, after OnStart and never after
	// OnEnd: the instants to read what the far side received in the level.
	OnWindowStart, OnWindowEnd func(i int)
	// OnEnd, when set, is called once level i is over, with what it
	// measured, or with r nil when it failed before it measured anything
	// (the sweep then stops). It may complete r with what the caller
	// knows (DeliveredUp): Run returns r as OnEnd left it. An error it returns stops the sweep after
	// this level; Run returns it, joined with the level's.
	OnEnd func(i int, r *Result) error
}

// LevelCounts returns the connection counts of s's levels: s.Levels, or
// one level of s.Config.Conns.
func (s Sweep) LevelCounts() []int {
	if len(s.Levels) > 0 {
		return s.Levels
	}
	return []int{s.Config.Conns}
}

// Run runs the levels in turn and returns what they measured, one Result
// a level. It stops after a level that failed (returning its error, and
// that level's result when it measured something), after one that ctx
// ended, or when OnEnd returns an error. Run owns the goroutines of each
// level (those of [Run] or of a [Fleet]) and waits for them before it
// returns; s.Dialer stays the caller's.
func (s Sweep) Run(ctx context.Context) ([]Result, error) {
	var results []Result
	for i, conns := range s.LevelCounts() {
		c := s.Config
		c.Conns = conns
		var onSecond func(Second)
		if s.OnStart != nil {
			onSecond = s.OnStart(i, c)
		}
		res, err := s.runLevel(ctx, c, onSecond, s.window(i))
		if err != nil && res.Histograms.Connect == nil {
			// Nothing was measured: there is no result to report.
			if endErr := s.end(i, nil); endErr != nil {
				err = errors.Join(err, endErr)
			}
			return results, err
		}
		err = errors.Join(err, s.end(i, &res))
		results = append(results, res) // as OnEnd completed it
		if err != nil || ctx.Err() != nil {
			return results, err
		}
	}
	return results, nil
}

// end calls OnEnd, if set.
func (s Sweep) end(i int, r *Result) error {
	if s.OnEnd == nil {
		return nil
	}
	return s.OnEnd(i, r)
}

// levelWindow is a level's OnWindowStart and OnWindowEnd, or nil.
type levelWindow struct{ start, end func() }

// window returns level i's window hooks.
func (s Sweep) window(i int) levelWindow {
	var w levelWindow
	if s.OnWindowStart != nil {
		w.start = func() { s.OnWindowStart(i) }
	}
	if s.OnWindowEnd != nil {
		w.end = func() { s.OnWindowEnd(i) }
	}
	return w
}

// runLevel runs c in this process, dialing through s.Dialer, or over
// s.Procs children, each sent its share of c as data.
func (s Sweep) runLevel(ctx context.Context, c ChildConfig, onSecond func(Second), w levelWindow) (Result, error) {
	if s.Procs > 1 && c.Conns > 1 {
		if s.Command == nil {
			return Result{}, errors.New("loadgen: a Sweep over several processes needs a Command")
		}
		return Fleet{Command: s.Command, OnSecond: onSecond, OnWindowStart: w.start, OnWindowEnd: w.end}.Run(ctx, c, s.Procs)
	}
	cfg, err := c.BuildOver(s.Dialer)
	if err != nil {
		return Result{}, err
	}
	cfg.OnSecond, cfg.OnWindowStart, cfg.OnWindowEnd = onSecond, w.start, w.end
	return Run(ctx, cfg)
}

// CheckOpened returns an error naming the target of the first of results
// in which no connection opened, nil when every one opened some: a run
// that opened nothing measured nothing of the path.
func CheckOpened(results []Result) error {
	for _, r := range results {
		if r.ConnsAchieved == 0 {
			return fmt.Errorf("no connection to %s could be opened", r.Target)
		}
	}
	return nil
}
