package matrix

import (
	"context"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

// fakeRun stands for Run: a report in which configuration "x" restarted
// the working tunnel once in half an hour and caught its one outage in 8 s.
// It records the seeds, and the run numbered interruptAt (from 1) is cut
// short by cancel.
type fakeRun struct {
	seeds       []string
	interruptAt int
	cancel      context.CancelFunc
	// failAt, when set, is the run (from 1) in which "x" failed.
	failAt int
}

func (f *fakeRun) run(ctx context.Context, spec scenarios.Spec, _ scenarios.Options) (*scenarios.Report, error) {
	f.seeds = append(f.seeds, spec.Name+"/"+string(rune('0'+spec.Seed)))
	detection := 8.0
	rep := &scenarios.Report{
		Name: spec.Name, Seed: spec.Seed, Spec: spec, Order: []string{"x"},
		Configs: map[string]scenarios.ConfigReport{"x": {
			WorkingSeconds: 1800, FalseRestarts: 1, BlipActions: 1, LaterActions: 1, BrokenConnections: 500, Restarts: 1,
			Outages:        []scenarios.OutageReport{{Start: 10, End: 20, Detected: true, DetectionSeconds: &detection}},
			OutageDetected: true, DetectionSeconds: &detection, Timeline: scenarios.Timeline{Restarts: []scenarios.Offset{6}},
			Margin: scenarios.Margin{FailureThreshold: 3, TimeoutMS: 1000}, // validCondition's kubelet defaults
		}},
	}
	if len(f.seeds) == f.interruptAt {
		f.cancel()
		rep.Interrupted = true
	}
	if len(f.seeds) == f.failAt {
		x := rep.Configs["x"]
		x.Failed = "no probe ran in 30s"
		rep.Configs["x"] = x
		rep.StalledSeconds = 9.8
	}
	return rep, nil
}

func tinyCondition(name string, seed uint64) scenarios.Spec {
	return scenarios.Spec{
		Name: name, Seed: seed, Duration: scenarios.D(30 * time.Second),
		Link:    scenarios.LinkSpec{Outages: []scenarios.Window{{Start: scenarios.D(5 * time.Second), Duration: scenarios.D(2 * time.Second), Blip: true}, {Start: scenarios.D(10 * time.Second), Duration: scenarios.D(10 * time.Second)}}},
		Configs: []scenarios.ConfigSpec{{Name: "x"}},
	}
}

// validCondition is tinyCondition as a spec that runs, of an hour, so
// that fakeRun's report of it is one that Run can write.
func validCondition(name string, seed uint64) scenarios.Spec {
	s := tinyCondition(name, seed)
	s.Duration = scenarios.D(time.Hour)
	s.Link.Rate, s.Link.Queue = 20*rate.Mbit, harness.QueueLimit{Packets: 256}
	s.Load.Conns = 10
	s.Configs[0].Health.Mode = middleware.ModeProbe
	s.Configs[0].Prober = scenarios.ProberSpec{Kind: "kubelet", Endpoint: "/check/"}
	return s
}

// The matrix's bookkeeping: conditions in order on every pass, each pass
// with the next seed, the machine's CPU per run, the rates over the runs
// that completed, and an interruption that keeps what was measured.
func TestRunMatrixBookkeeping(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeRun{interruptAt: 5, cancel: cancel}
	var busy, total float64
	cpuTimes := func() (float64, float64, error) { // 95% busy during odd runs, 50% during even ones
		total += 100
		if len(f.seeds)%2 == 1 {
			busy += 95
		} else {
			busy += 50
		}
		return busy, total, nil
	}
	var seen []RunReport
	rep, err := Run(ctx, []scenarios.Spec{tinyCondition("a", 1), tinyCondition("b", 4)}, Options{
		Repeat: 3, run: f.run, cpuTimes: cpuTimes, OnRun: func(r RunReport) { seen = append(seen, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/1", "b/4", "a/2", "b/5", "a/3"}; !slices.Equal(f.seeds, want) {
		t.Errorf("runs %v, want %v: the conditions in order, each pass the next seed", f.seeds, want)
	}
	if !rep.Interrupted || len(rep.Runs) != 5 || len(seen) != 5 || !rep.Runs[4].Report.Interrupted {
		t.Fatalf("interrupted %v with %d runs (%d reported); want the interrupted fifth kept", rep.Interrupted, len(rep.Runs), len(seen))
	}
	if !rep.Runs[0].Saturated || rep.Runs[1].Saturated || rep.Runs[0].CPU < 0.94 {
		t.Errorf("CPU of the first runs: %+v, %+v; want the first saturated", rep.Runs[0], rep.Runs[1])
	}
	// Four completed runs of half an hour, a restart in each: 4 in 2 h.
	x := rep.Overall["x"]
	if x.Runs != 4 || x.WorkingHours != 2 || x.FalseRestarts != 4 || x.FalseRestartRate.PerHour != 2 ||
		x.Outages != 4 || x.Detected != 4 || x.Blips != 4 || x.BlipActions != 4 || x.LaterActions != 4 || x.BrokenPerHour != 1000 || x.SaturatedRuns != 2 {
		t.Errorf("overall %+v", x)
	}
	if iv := x.FalseRestartRate.Interval; !near(iv.Low*2, 1.0899) || !near(iv.High*2, 10.2416) {
		t.Errorf("the interval of 4 restarts in 2 h: %+v", iv)
	}
	if x.DetectedShare.High != 1 || *x.DetectionMedianSeconds != 8 {
		t.Errorf("detection %+v, median %v", x.DetectedShare, *x.DetectionMedianSeconds)
	}
	if a := rep.ByCondition["a"]["x"]; a.Runs != 2 {
		t.Errorf("condition a: %d completed runs, want 2 (its third was interrupted)", a.Runs)
	}

	dir := t.TempDir()
	if err := rep.WriteResults(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "matrix.md"))
	if err != nil || !strings.Contains(string(md), "Interrupted") || !strings.Contains(string(md), "saturated the CPU") ||
		!strings.Contains(string(md), "1 restart(s) or heal(s) after an outage with the link working again, not in the rates") {
		t.Errorf("matrix.md does not say it was interrupted and saturated, or note a run's later actions: %v\n%s", err, md)
	}
	for _, name := range []string{"matrix.json", "a-seed1/report.json", "b-seed5/timeline.png"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	pngFile, err := os.Open(filepath.Join(dir, "matrix.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer pngFile.Close()
	if _, err := png.Decode(pngFile); err != nil {
		t.Errorf("matrix.png: %v", err)
	}
}

// A matrix given a seed starts every condition there.
func TestRunMatrixSeed(t *testing.T) {
	f := &fakeRun{}
	if _, err := Run(context.Background(), []scenarios.Spec{tinyCondition("a", 1), tinyCondition("b", 4)},
		Options{Repeat: 2, Seed: 7, run: f.run, cpuTimes: func() (float64, float64, error) { return 0, 0, nil }}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/7", "b/7", "a/8", "b/8"}; !slices.Equal(f.seeds, want) {
		t.Errorf("runs %v, want %v", f.seeds, want)
	}
}

// A Ctrl-C while a run's labs start (Run returning the labs' error on the
// ended context) ends the matrix as interrupted, keeping the runs before
// it, not as a failure.
func TestRunMatrixInterruptedWhileALabStarts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeRun{}
	run := func(ctx context.Context, spec scenarios.Spec, opt scenarios.Options) (*scenarios.Report, error) {
		if len(f.seeds) == 1 {
			cancel()
			return nil, fmt.Errorf("lab: %w", ctx.Err())
		}
		return f.run(ctx, spec, opt)
	}
	rep, err := Run(ctx, []scenarios.Spec{tinyCondition("a", 1), tinyCondition("b", 4)},
		Options{run: run, cpuTimes: func() (float64, float64, error) { return 0, 0, nil }})
	if err != nil || !rep.Interrupted || len(rep.Runs) != 1 {
		t.Errorf("error %v, interrupted %v, %d runs; want no error, interrupted, the first run kept", err, rep.Interrupted, len(rep.Runs))
	}
}

// A run in which a configuration failed is kept, said so, and left out of
// that configuration's rates.
func TestRunMatrixLeavesFailedRunsOutOfTheRates(t *testing.T) {
	f := &fakeRun{failAt: 2}
	rep, err := Run(context.Background(), []scenarios.Spec{tinyCondition("a", 1)},
		Options{Repeat: 3, run: f.run, cpuTimes: func() (float64, float64, error) { return 0, 0, nil }})
	if err != nil {
		t.Fatal(err)
	}
	// Two measured runs of half an hour, a restart and a detected outage in
	// each.
	x := rep.Overall["x"]
	if len(rep.Runs) != 3 || x.Runs != 2 || x.FailedRuns != 1 || x.WorkingHours != 1 || x.FalseRestarts != 2 ||
		x.Outages != 2 || x.Detected != 2 || x.Blips != 2 {
		t.Errorf("%d runs; overall %+v: want 2 measured and 1 failed", len(rep.Runs), x)
	}
	if a := rep.ByCondition["a"]["x"]; a.Runs != 2 || a.FailedRuns != 1 {
		t.Errorf("condition a: %+v", a)
	}
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "2 (+1 failed)") || !strings.Contains(md.String(), "stalled 9.8 s failed, not in the rates: x: no probe ran in 30s") {
		t.Errorf("matrix.md does not count or note the failed run:\n%s", md.String())
	}
}

// MinDuration adds up the runs, and refuses more passes than MaxRepeat or
// more time than MaxDuration.
func TestMatrixTimeBoundsTheRuns(t *testing.T) {
	conditions := scenarios.MatrixConditions()
	var pass time.Duration
	for _, c := range conditions {
		pass += c.Duration.Duration
	}
	if took, err := MinDuration(conditions, 2); err != nil || took != 2*pass {
		t.Errorf("two passes: %v, %v; want %v", took, err, 2*pass)
	}
	most := int(scenarios.MaxDuration / pass)
	if _, err := MinDuration(conditions, most); err != nil {
		t.Errorf("%d passes of %v: %v; they fit in %v", most, pass, err, scenarios.MaxDuration)
	}
	if _, err := MinDuration(conditions, most+1); err == nil || !strings.Contains(err.Error(), "more than the 7 days") {
		t.Errorf("%d passes of %v: %v; want them refused", most+1, pass, err)
	}
	short := []scenarios.Spec{tinyCondition("a", 1)} // 30 s
	if _, err := MinDuration(short, MaxRepeat); err != nil {
		t.Errorf("%d passes of 30 s: %v", MaxRepeat, err)
	}
	if _, err := MinDuration(short, MaxRepeat+1); err == nil || !strings.Contains(err.Error(), "at most 1000") {
		t.Errorf("%d passes: %v; want them refused", MaxRepeat+1, err)
	}
	long := scenarios.Spec{Duration: scenarios.D(time.Duration(math.MaxInt64))}
	if _, err := MinDuration([]scenarios.Spec{long, long, long}, 1); err == nil {
		t.Error("three runs of 292 years each: no error")
	}
}

// Each run's start says which run of how many and the time left: the runs'
// durations at first, then scaled by what the runs so far took in real
// time; its progress lines start with the same.
func TestRunMatrixSaysTheTimeLeft(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	var prefixes []string
	run := func(_ context.Context, spec scenarios.Spec, o scenarios.Options) (*scenarios.Report, error) {
		prefixes = append(prefixes, o.ProgressPrefix)
		now = now.Add(45 * time.Second) // a 30 s run takes 45 s with its labs
		return (&fakeRun{}).run(context.Background(), spec, o)
	}
	var log strings.Builder
	_, err := Run(context.Background(), []scenarios.Spec{tinyCondition("a", 1), tinyCondition("b", 4)}, Options{
		Repeat: 2, run: run, Log: &log, now: func() time.Time { return now },
		cpuTimes: func() (float64, float64, error) { return 0, 0, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "run 1 of 4: a, seed 1 (about 2m0s left)\nrun 2 of 4: b, seed 4 (about 2m15s left)\n" +
		"run 3 of 4: a, seed 2 (about 1m30s left)\nrun 4 of 4: b, seed 5 (about 45s left)\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
	}
	if len(prefixes) != 4 || prefixes[1] != "run 2/4, ~2m15s left " {
		t.Errorf("progress prefixes %q", prefixes)
	}
}
