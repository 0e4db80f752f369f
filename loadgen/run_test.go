package loadgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

func TestRunBytesAgreeWithSink(t *testing.T) {
	for _, dir := range []loadgen.Direction{loadgen.Up, loadgen.Down, loadgen.Both} {
		t.Run(dir.String(), func(t *testing.T) {
			s := startSink(t, "127.0.0.1:0")
			const conns = 100
			res, err := loadgen.Run(context.Background(), loadgen.Config{
				Target:    s.Addr,
				Conns:     conns,
				Duration:  time.Second,
				Direction: dir,
			})
			if err != nil {
				t.Fatal(err)
			}
			st := s.Stats()
			t.Logf("up %d down %d, sink %+v, errors %v, series %d", res.BytesUp, res.BytesDown, st, res.Errors, len(res.Series))
			if res.BytesUp != st.BytesIn || res.BytesDown != st.BytesOut {
				t.Errorf("run: up %d, down %d; sink: in %d, out %d", res.BytesUp, res.BytesDown, st.BytesIn, st.BytesOut)
			}
			if up, down := res.BytesUp > 0, res.BytesDown > 0; up != (dir != loadgen.Down) || down != (dir != loadgen.Up) {
				t.Errorf("%v: up %d, down %d bytes", dir, res.BytesUp, res.BytesDown)
			}
			if res.ConnsAchieved != conns || res.ConnsRequested != conns || st.Conns != conns {
				t.Errorf("achieved %d of %d; sink accepted %d", res.ConnsAchieved, res.ConnsRequested, st.Conns)
			}
			if res.Disruptions != 0 || len(res.Errors) != 0 || res.Interrupted {
				t.Errorf("disruptions %d, errors %v, interrupted %v", res.Disruptions, res.Errors, res.Interrupted)
			}
			if res.ConnectLatencyMS.Count != conns {
				t.Errorf("connect latency count %d", res.ConnectLatencyMS.Count)
			}
			checkSeries(t, res)
		})
	}
}

// interiorRate returns the mean bytes per second over the whole seconds
// of res's series, leaving out the partial first and last ones.
func interiorRate(t *testing.T, res loadgen.Result, bytes func(loadgen.Second) int64) float64 {
	t.Helper()
	if len(res.Series) < 3 {
		t.Fatalf("series of %d seconds has no whole one", len(res.Series))
	}
	var sum int64
	inner := res.Series[1 : len(res.Series)-1]
	for _, s := range inner {
		sum += bytes(s)
	}
	return float64(sum) / float64(len(inner))
}

func TestRunPacedRate(t *testing.T) {
	const rate = 40e6 // bits/s, over 20 connections
	for _, tc := range []struct {
		dir   loadgen.Direction
		bytes func(loadgen.Second) int64
	}{
		{loadgen.Up, func(s loadgen.Second) int64 { return s.BytesUp }},
		{loadgen.Down, func(s loadgen.Second) int64 { return s.BytesDown }},
	} {
		t.Run(tc.dir.String(), func(t *testing.T) {
			s := startSink(t, "127.0.0.1:0")
			res, err := loadgen.Run(context.Background(), loadgen.Config{
				Target:    s.Addr,
				Conns:     20,
				Duration:  3 * time.Second,
				Rate:      rate,
				Direction: tc.dir,
			})
			if err != nil {
				t.Fatal(err)
			}
			got := interiorRate(t, res, tc.bytes) * 8
			t.Logf("%v: %.2f Mbit/s over whole seconds, target %.0f", tc.dir, got/1e6, rate/1e6)
			if got < rate*0.95 || got > rate*1.05 {
				t.Errorf("paced at %.2f Mbit/s, want %.0f ± 5%%", got/1e6, rate/1e6)
			}
			if st := s.Stats(); res.BytesUp != st.BytesIn || res.BytesDown != st.BytesOut {
				t.Errorf("run: up %d, down %d; sink: in %d, out %d", res.BytesUp, res.BytesDown, st.BytesIn, st.BytesOut)
			}
		})
	}
}

func TestRunRefused(t *testing.T) {
	addr := testnet.RefusedAddr(t)
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Target:      addr,
		Conns:       5,
		Duration:    100 * time.Millisecond,
		NoReconnect: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors["refused"] != 5 || len(res.Errors) != 1 || res.ConnsAchieved != 0 {
		t.Errorf("errors %v, achieved %d; want 5 refused, none open", res.Errors, res.ConnsAchieved)
	}
	var connectErrors int64
	for _, s := range res.Series {
		connectErrors += s.ConnectErrors
	}
	if connectErrors != 5 {
		t.Errorf("series counts %d connect errors, want 5", connectErrors)
	}
}

func TestRunReconnects(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	const conns = 20
	w := startWatched(t, loadgen.Config{Target: s.Addr, Conns: conns, Duration: time.Minute, Rate: 1e6})
	w.waitFor("all connections open", func(sec loadgen.Second) bool { return sec.Open == conns })

	// The sink goes away, with its listener and every connection, and a
	// new one comes up on the same address.
	s.stop()
	s2 := startSink(t, s.Addr)
	var disrupted int64
	w.waitFor("the disruptions", func(sec loadgen.Second) bool { disrupted += sec.Disruptions; return disrupted >= conns })
	w.waitFor("all connections open again", func(sec loadgen.Second) bool { return sec.Open == conns })
	res, err := w.stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("disruptions %d, errors %v, achieved %d, second sink %+v", res.Disruptions, res.Errors, res.ConnsAchieved, s2.Stats())
	if res.Disruptions < conns || res.Errors["reset"] < conns {
		t.Errorf("disruptions %d, errors %v; want at least %d resets", res.Disruptions, res.Errors, conns)
	}
	if st := s2.Stats(); st.Conns < conns {
		t.Errorf("the new sink accepted %d connections, want %d", st.Conns, conns)
	}
	if !res.Interrupted || res.ConnsAchieved != conns {
		t.Errorf("interrupted %v, achieved %d", res.Interrupted, res.ConnsAchieved)
	}
	checkSeries(t, res)
}

func TestRunInterrupted(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	res, err := loadgen.Run(ctx, loadgen.Config{
		Target:   s.Addr,
		Conns:    50,
		Duration: time.Minute,
		OnSecond: func(loadgen.Second) {
			if cancelled.IsZero() { // OnSecond runs in one goroutine
				cancelled = time.Now()
				cancel()
			}
		},
	})
	took := time.Since(cancelled)
	if err != nil {
		t.Fatal(err)
	}
	if took > 2*time.Second {
		t.Errorf("Run returned %v after ctx ended, want within 2s", took)
	}
	st := s.Stats()
	if !res.Interrupted || res.BytesUp == 0 || res.ConnsAchieved != 50 || len(res.Series) == 0 {
		t.Errorf("interrupted %v, up %d, achieved %d, %d seconds", res.Interrupted, res.BytesUp, res.ConnsAchieved, len(res.Series))
	}
	if res.BytesUp != st.BytesIn {
		t.Errorf("run: up %d; sink: in %d", res.BytesUp, st.BytesIn)
	}
	checkSeries(t, res)
}

func TestRunShortHasASecond(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	res, err := loadgen.Run(context.Background(), loadgen.Config{Target: s.Addr, Conns: 3, Duration: time.Millisecond, Rate: 1e3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Series) == 0 || res.ConnsAchieved != 3 {
		t.Errorf("%d seconds, achieved %d; want at least one second and 3", len(res.Series), res.ConnsAchieved)
	}
	checkSeries(t, res)
}

func TestRunSamplesTheProcess(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	res, err := loadgen.Run(context.Background(), loadgen.Config{Target: s.Addr, Conns: 10, Duration: time.Millisecond, Rate: 1e3})
	if err != nil {
		t.Fatal(err)
	}
	last := res.Series[len(res.Series)-1]
	// The readings of this process from /proc: it holds at least the 10
	// connections and runs several threads.
	if last.RSSBytes <= 0 || last.FDs < 10 || last.Threads < 2 || last.CPUSeconds < 0 {
		t.Errorf("process readings %+v", last)
	}
}

// Several Runs in one process (the scenario runner runs one per lab) share
// the process sampler.
func TestConcurrentRuns(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := loadgen.Run(context.Background(), loadgen.Config{Target: s.Addr, Conns: 5, Duration: 1100 * time.Millisecond, Rate: 1e5})
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// The ramp's time is measured from the start to the last first dial's
// end: a paced ramp cannot beat its own schedule, and one stopped before
// it could start every dial has no time at all.
func TestRunTimesItsRamp(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	const conns, rate = 40, 400.0
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Target: s.Addr, Conns: conns, ConnectRate: rate, Duration: time.Millisecond, Rate: 1e3,
	})
	if err != nil {
		t.Fatal(err)
	}
	schedule := (conns - 1) / rate // the last dial's start
	if res.RampSeconds == nil || *res.RampSeconds < schedule || *res.RampSeconds > res.DurationSeconds {
		t.Errorf("ramp_seconds %v, want from %v (the schedule) to %v (the run)", res.RampSeconds, schedule, res.DurationSeconds)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err = loadgen.Run(ctx, loadgen.Config{
		Target: s.Addr, Conns: 100, ConnectRate: 10, Duration: time.Minute, Rate: 1e3,
		OnSecond: func(loadgen.Second) { cancel() },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.RampSeconds != nil {
		t.Errorf("stopped after its first second of a 10 s ramp: interrupted %v, ramp_seconds set %v; want none", res.Interrupted, res.RampSeconds != nil)
	}
}
