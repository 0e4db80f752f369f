package loadgen_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// sweepLog records what a Sweep tells its callbacks.
type sweepLog struct {
	started []int  // the Conns of each level started
	ended   []bool // per level ended: whether it measured something
}

// hook sets s's callbacks to record into l; endErr, if set, is what OnEnd
// returns for level i.
func (l *sweepLog) hook(s *loadgen.Sweep, endErr func(i int) error) {
	s.OnStart = func(i int, c loadgen.ChildConfig) func(loadgen.Second) {
		l.started = append(l.started, c.Conns)
		return nil
	}
	s.OnEnd = func(i int, r *loadgen.Result) error {
		l.ended = append(l.ended, r != nil)
		if endErr != nil {
			return endErr(i)
		}
		return nil
	}
}

// What OnEnd adds to a level's result (what the target received) is in
// the results Run returns.
func TestSweepKeepsWhatOnEndAdds(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	sw := loadgen.Sweep{Config: loadgen.ChildConfig{Target: s.Addr, Duration: 100 * time.Millisecond}, Levels: []int{1, 2}}
	sw.OnEnd = func(i int, r *loadgen.Result) error {
		d := int64(100 + i)
		r.DeliveredUp = &d
		return nil
	}
	results, err := sw.Run(context.Background())
	if err != nil || len(results) != 2 {
		t.Fatalf("%d results, %v; want both levels", len(results), err)
	}
	for i, r := range results {
		if r.DeliveredUp == nil || *r.DeliveredUp != int64(100+i) {
			t.Errorf("level %d: delivered %v, want %d as OnEnd set it", i, r.DeliveredUp, 100+i)
		}
	}
}

// Each level's window opens after OnStart and closes before OnEnd, so that
// a caller reads what the far side received within it.
func TestSweepWindowHooks(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	sw := loadgen.Sweep{Config: loadgen.ChildConfig{Target: s.Addr, Duration: 100 * time.Millisecond}, Levels: []int{1, 2}}
	var calls []string
	note := func(what string, i int) { calls = append(calls, what+" "+string(rune('0'+i))) }
	sw.OnStart = func(i int, _ loadgen.ChildConfig) func(loadgen.Second) { note("start", i); return nil }
	sw.OnWindowStart = func(i int) { note("window start", i) }
	sw.OnWindowEnd = func(i int) { note("window end", i) }
	sw.OnEnd = func(i int, _ *loadgen.Result) error { note("end", i); return nil }
	if _, err := sw.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"start 0", "window start 0", "window end 0", "end 0", "start 1", "window start 1", "window end 1", "end 1"}
	if !slices.Equal(calls, want) {
		t.Errorf("calls %q, want %q", calls, want)
	}
}

func TestSweepRunsEveryLevel(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	sw := loadgen.Sweep{
		Config: loadgen.ChildConfig{Target: s.Addr, Duration: 300 * time.Millisecond},
		Levels: []int{2, 3},
	}
	var log sweepLog
	log.hook(&sw, nil)
	results, err := sw.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(log.started, []int{2, 3}) || !slices.Equal(log.ended, []bool{true, true}) {
		t.Errorf("started %v, ended %v; want levels of 2 and 3, each measured", log.started, log.ended)
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want 2", len(results))
	}
	for i, want := range []int64{2, 3} {
		if r := results[i]; r.ConnsAchieved != want || int64(r.ConnsRequested) != want {
			t.Errorf("level %d: %d of %d connections, want %d of %d", i, r.ConnsAchieved, r.ConnsRequested, want, want)
		}
		checkSeries(t, results[i])
	}
	if err := loadgen.CheckOpened(results); err != nil {
		t.Errorf("CheckOpened = %v, want nil", err)
	}
}

func TestSweepWithoutLevelsRunsConfigConns(t *testing.T) {
	sw := loadgen.Sweep{Config: loadgen.ChildConfig{Conns: 7}}
	if got := sw.LevelCounts(); !slices.Equal(got, []int{7}) {
		t.Errorf("LevelCounts = %v, want [7]", got)
	}
}

// A level that cannot run (no connection asked for) stops the sweep with
// its error, after what the levels before it measured.
func TestSweepStopsAfterAFailedLevel(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	sw := loadgen.Sweep{
		Config: loadgen.ChildConfig{Target: s.Addr, Duration: 200 * time.Millisecond},
		Levels: []int{2, 0, 3},
	}
	var log sweepLog
	log.hook(&sw, nil)
	results, err := sw.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Conns must be > 0") {
		t.Errorf("Run = %v, want the failed level's error", err)
	}
	if len(results) != 1 || results[0].ConnsAchieved != 2 {
		t.Errorf("results %+v, want the first level's alone", results)
	}
	if !slices.Equal(log.started, []int{2, 0}) || !slices.Equal(log.ended, []bool{true, false}) {
		t.Errorf("started %v, ended %v; want the third level never started", log.started, log.ended)
	}
}

// An error from OnEnd (a summary that could not be written) stops the
// sweep after its level, which is still returned.
func TestSweepStopsWhenOnEndFails(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	sw := loadgen.Sweep{
		Config: loadgen.ChildConfig{Target: s.Addr, Duration: 200 * time.Millisecond},
		Levels: []int{2, 3},
	}
	errWrite := errors.New("cannot write")
	var log sweepLog
	log.hook(&sw, func(int) error { return errWrite })
	results, err := sw.Run(context.Background())
	if !errors.Is(err, errWrite) || len(results) != 1 || !slices.Equal(log.started, []int{2}) {
		t.Errorf("Run = %d results, %v; levels started %v; want one level and OnEnd's error", len(results), err, log.started)
	}
}

// A sweep interrupted during a level returns that level, marked
// interrupted, and runs no more.
func TestSweepStopsAfterAnInterruptedLevel(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sw := loadgen.Sweep{
		Config: loadgen.ChildConfig{Target: s.Addr, Duration: time.Minute},
		Levels: []int{2, 3},
	}
	var log sweepLog
	log.hook(&sw, nil)
	sw.OnStart = func(i int, c loadgen.ChildConfig) func(loadgen.Second) {
		log.started = append(log.started, c.Conns)
		// Stop as Ctrl-C would, once the level holds its connections.
		return func(s loadgen.Second) {
			if s.Open == int64(c.Conns) {
				cancel()
			}
		}
	}
	results, err := sw.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || !results[0].Interrupted || results[0].ConnsAchieved != 2 {
		t.Errorf("results %+v, want the first level alone, interrupted with 2 connections", results)
	}
	if !slices.Equal(log.started, []int{2}) || !slices.Equal(log.ended, []bool{true}) {
		t.Errorf("started %v, ended %v; want the first level alone", log.started, log.ended)
	}
}

func TestSweepNoConnectionOpened(t *testing.T) {
	addr := testnet.RefusedAddr(t)
	sw := loadgen.Sweep{Config: loadgen.ChildConfig{Target: addr, Conns: 2, Duration: 200 * time.Millisecond, NoReconnect: true}}
	results, err := sw.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].ConnsAchieved != 0 {
		t.Fatalf("results %+v, want one level that opened nothing", results)
	}
	want := "no connection to " + addr + " could be opened"
	if err := loadgen.CheckOpened(results); err == nil || err.Error() != want {
		t.Errorf("CheckOpened = %v, want %q", err, want)
	}
}

func TestSweepOverProcessesNeedsACommand(t *testing.T) {
	sw := loadgen.Sweep{Config: loadgen.ChildConfig{Target: "127.0.0.1:9", Conns: 4}, Procs: 2}
	var ended []bool
	sw.OnEnd = func(_ int, r *loadgen.Result) error { ended = append(ended, r != nil); return nil }
	results, err := sw.Run(context.Background())
	if err == nil || len(results) != 0 || !slices.Equal(ended, []bool{false}) {
		t.Errorf("Run = %v, %v; OnEnd saw %v; want an error and nothing measured", results, err, ended)
	}
}

func TestSweepDescriptorShortfall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sweep  loadgen.Sweep
		limit  int
		want   *loadgen.DescriptorShortfall
		reason string
	}{
		{"fits", loadgen.Sweep{Levels: []int{100, 900}}, 1024, nil, "900 connections and 64 spare fit in 1024"},
		{"unknown limit", loadgen.Sweep{Config: loadgen.ChildConfig{Conns: 1 << 20}}, 0, nil, "a limit of 0 is not known"},
		{"largest level", loadgen.Sweep{Levels: []int{100, 2000, 10}}, 1024,
			&loadgen.DescriptorShortfall{PerProcess: 2000, Limit: 1024, Procs: 3}, "2000 over 960 usable take 3 processes"},
		{"split", loadgen.Sweep{Config: loadgen.ChildConfig{Conns: 2000}, Procs: 2}, 1024,
			&loadgen.DescriptorShortfall{PerProcess: 1000, Limit: 1024, Procs: 3}, "1000 a process is over 960"},
		{"spread", loadgen.Sweep{Config: loadgen.ChildConfig{Conns: 2000}, Procs: 3}, 1024, nil, "667 a process fit"},
		{"tiny limit", loadgen.Sweep{Config: loadgen.ChildConfig{Conns: 10}}, 64,
			&loadgen.DescriptorShortfall{PerProcess: 10, Limit: 64, Procs: 10}, "the reserve takes every descriptor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.sweep.DescriptorShortfall(tc.limit)
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Errorf("DescriptorShortfall(%d) = %+v, want %+v: %s", tc.limit, got, tc.want, tc.reason)
			}
		})
	}
}
