package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// event is one thing a load process measured in second t.
type event struct {
	pod     int
	t       int64
	kind    int // evConnect, evProbe, evProbeFail, evBytes, evError
	latency time.Duration
	bytes   int64
}

const (
	evConnect = iota
	evProbe
	evProbeFail
	evBytes
	evError
)

// resultOf builds the Result a process (or one process doing all the
// work) would report for events over seconds [from, to].
func resultOf(events []event, start time.Time, from, to int64, procs int) loadgen.Result {
	connect, probe := loadgen.NewLatencyHistogram(), loadgen.NewLatencyHistogram()
	r := loadgen.Result{
		Target: "sink:9000", Path: "direct", Start: start, Processes: procs,
		DurationSeconds: float64(to-from+1) - start.Sub(time.Unix(from, 0)).Seconds(),
		Errors:          map[string]int64{},
	}
	seconds := map[int64]*loadgen.Second{}
	for t := from; t <= to; t++ {
		seconds[t] = &loadgen.Second{T: t}
	}
	for _, e := range events {
		s := seconds[e.t]
		switch e.kind {
		case evConnect:
			loadgen.RecordLatency(connect, e.latency)
			s.Connects++
		case evProbe:
			loadgen.RecordLatency(probe, e.latency)
			s.Probes++
			s.ProbeMaxMS = max(s.ProbeMaxMS, float64(e.latency.Microseconds())/1000)
			r.Probes++
		case evProbeFail:
			s.Probes++
			s.ProbeFailures++
			r.Probes++
			r.ProbeFailures++
		case evBytes:
			s.BytesUp += e.bytes
			s.BytesDown += 2 * e.bytes
			r.BytesUp += e.bytes
			r.BytesDown += 2 * e.bytes
		case evError:
			s.ConnectErrors++
			r.Errors["timeout"]++
		}
	}
	var open int64
	for t := from; t <= to; t++ {
		s := seconds[t]
		open += s.Connects
		s.Open = open
		r.ConnsAchieved = max(r.ConnsAchieved, open)
		r.Series = append(r.Series, *s)
	}
	r.ConnsRequested = int(open)
	r.Histograms = loadgen.Histograms{Connect: connect.Export(), Probe: probe.Export()}
	r.ConnectLatencyMS = loadgen.Summarize(connect)
	r.ProbeLatencyMS = loadgen.Summarize(probe)
	return r
}

func TestLoadMergeEqualsOneRun(t *testing.T) {
	t.Parallel()
	const (
		pods    = 5
		samples = 40_000
		base    = int64(1_800_000_000)
		last    = base + 59
	)
	rng := rand.New(rand.NewPCG(7, 11))
	// Pods start up to 10 s apart and run to the same end.
	startSec := make([]int64, pods)
	for p := range startSec {
		startSec[p] = base + rng.Int64N(10)
	}
	startSec[0] = base
	var events []event
	for range samples {
		p := rng.IntN(pods)
		e := event{pod: p, t: startSec[p] + rng.Int64N(last-startSec[p]+1), kind: rng.IntN(5)}
		// Log-normal latencies from about 50 µs to well past 10 s, as a
		// loaded tunnel gives.
		e.latency = time.Duration(math.Exp(rng.NormFloat64()*2.5+math.Log(20e6))) + time.Microsecond
		e.bytes = rng.Int64N(1 << 20)
		events = append(events, e)
	}

	dir := t.TempDir()
	var files []string
	for p := range pods {
		mine := slices.DeleteFunc(slices.Clone(events), func(e event) bool { return e.pod != p })
		start := time.Unix(startSec[p], int64(p)*1e6)
		r := resultOf(mine, start, startSec[p], last, 1)
		file := filepath.Join(dir, "result-"+string(rune('0'+p))+".json")
		if err := (loadgen.Report{Result: &r}).WriteFiles(file, ""); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	one := resultOf(events, time.Unix(base, 0), base, last, pods)

	out := filepath.Join(dir, "merged.json")
	var stdout, stderr bytes.Buffer
	args := append([]string{files[0], "--json", out}, files[1:]...) // flags between the files
	if code := loadMerge(args, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, &stderr)
	}
	if !strings.HasPrefix(stdout.String(), "merged 5 results\n") {
		t.Errorf("stdout does not start with the count:\n%s", &stdout)
	}
	rep, err := loadgen.ReadJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Result

	// Percentiles: exactly those of one histogram fed every sample.
	if m.ConnectLatencyMS != one.ConnectLatencyMS {
		t.Errorf("connect latency %+v, want %+v", m.ConnectLatencyMS, one.ConnectLatencyMS)
	}
	if m.ProbeLatencyMS != one.ProbeLatencyMS {
		t.Errorf("probe latency %+v, want %+v", m.ProbeLatencyMS, one.ProbeLatencyMS)
	}
	for _, h := range []struct {
		name      string
		got, want *hdrhistogram.Snapshot
	}{{"connect", m.Histograms.Connect, one.Histograms.Connect}, {"probe", m.Histograms.Probe, one.Histograms.Probe}} {
		g, w := hdrhistogram.Import(h.got), hdrhistogram.Import(h.want)
		if g.TotalCount() != w.TotalCount() || g.TotalCount() == 0 {
			t.Errorf("%s: %d samples, want %d", h.name, g.TotalCount(), w.TotalCount())
		}
		if !g.Equals(w) {
			t.Errorf("%s: merged histogram differs from the one fed every sample", h.name)
		}
		for _, q := range []float64{1, 25, 50, 90, 99, 99.9, 100} {
			if g.ValueAtQuantile(q) != w.ValueAtQuantile(q) {
				t.Errorf("%s: p%v %d µs, want %d µs", h.name, q, g.ValueAtQuantile(q), w.ValueAtQuantile(q))
			}
		}
	}

	// Counters added, series aligned on the second.
	if m.Processes != pods || m.ConnsRequested != one.ConnsRequested || m.ConnsAchieved != one.ConnsAchieved {
		t.Errorf("processes %d, requested %d, achieved %d; want %d, %d, %d",
			m.Processes, m.ConnsRequested, m.ConnsAchieved, pods, one.ConnsRequested, one.ConnsAchieved)
	}
	if m.BytesUp != one.BytesUp || m.BytesDown != one.BytesDown || m.Probes != one.Probes || m.ProbeFailures != one.ProbeFailures {
		t.Errorf("bytes %d/%d probes %d/%d; want %d/%d %d/%d", m.BytesUp, m.BytesDown, m.Probes, m.ProbeFailures,
			one.BytesUp, one.BytesDown, one.Probes, one.ProbeFailures)
	}
	if !reflect.DeepEqual(m.Errors, one.Errors) {
		t.Errorf("errors %v, want %v", m.Errors, one.Errors)
	}
	if !reflect.DeepEqual(m.Series, one.Series) {
		t.Errorf("series differ: %d seconds merged, want %d", len(m.Series), len(one.Series))
		for i := range min(len(m.Series), len(one.Series)) {
			if m.Series[i] != one.Series[i] {
				t.Errorf("first difference at %d:\n got %+v\nwant %+v", i, m.Series[i], one.Series[i])
				break
			}
		}
	}
	if !m.Start.Equal(one.Start) || m.DurationSeconds != one.DurationSeconds {
		t.Errorf("start %v, duration %v; want %v, %v", m.Start, m.DurationSeconds, one.Start, one.DurationSeconds)
	}
}

func TestLoadMergeSweeps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	level := func(lat time.Duration) loadgen.Result {
		return resultOf([]event{{t: 100, kind: evConnect, latency: lat}, {t: 100, kind: evProbe, latency: 2 * lat}},
			time.Unix(100, 0), 100, 100, 1)
	}
	var files []string
	for i := range 3 {
		rep := loadgen.Report{Levels: []loadgen.Result{level(time.Duration(i+1) * time.Millisecond), level(time.Duration(i+5) * time.Millisecond)}}
		f := filepath.Join(dir, "sweep-"+string(rune('a'+i))+".json")
		if err := rep.WriteFiles(f, ""); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out := filepath.Join(dir, "merged.json")
	var stdout, stderr bytes.Buffer
	if code := loadMerge(append([]string{"--json", out}, files...), noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, &stderr)
	}
	rep, err := loadgen.ReadJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Levels) != 2 {
		t.Fatalf("%d levels, want 2", len(rep.Levels))
	}
	for i, l := range rep.Levels {
		if l.ConnectLatencyMS.Count != 3 || l.Processes != 3 {
			t.Errorf("level %d: %d connect samples from %d processes, want 3 from 3", i, l.ConnectLatencyMS.Count, l.Processes)
		}
	}
	// Level 2 had connects of 5, 6 and 7 ms, one in each file.
	all := loadgen.NewLatencyHistogram()
	for _, ms := range []time.Duration{5, 6, 7} {
		loadgen.RecordLatency(all, ms*time.Millisecond)
	}
	if got, want := rep.Levels[1].ConnectLatencyMS, loadgen.Summarize(all); got != want {
		t.Errorf("level 2: connect latency %+v, want %+v", got, want)
	}
}

func TestLoadMergeErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	r := resultOf([]event{{t: 1, kind: evConnect, latency: time.Millisecond}}, time.Unix(1, 0), 1, 1, 1)
	run := filepath.Join(dir, "run.json")
	if err := (loadgen.Report{Result: &r}).WriteFiles(run, ""); err != nil {
		t.Fatal(err)
	}
	sweep := filepath.Join(dir, "sweep.json")
	if err := (loadgen.Report{Levels: []loadgen.Result{r}}).WriteFiles(sweep, ""); err != nil {
		t.Fatal(err)
	}
	// writeResult writes r changed by change.
	writeResult := func(name string, change func(r *loadgen.Result)) string {
		r := r
		change(&r)
		f := filepath.Join(dir, name)
		if err := (loadgen.Report{Result: &r}).WriteFiles(f, ""); err != nil {
			t.Fatal(err)
		}
		return f
	}
	negative := writeResult("negative.json", func(r *loadgen.Result) { r.BytesUp = -5 })
	sigFigs := writeResult("sigfigs.json", func(r *loadgen.Result) {
		h := *r.Histograms.Connect
		h.SignificantFigures = 0
		r.Histograms.Connect = &h
	})
	// Each valid (a run of 127 years could move that much), together too
	// much for int64.
	huge := func(r *loadgen.Result) { r.DurationSeconds, r.BytesDown = 4e9, 5e18 }
	hugeA := writeResult("huge-a.json", huge)
	hugeB := writeResult("huge-b.json", func(r *loadgen.Result) { huge(r); r.Start = r.Start.Add(time.Nanosecond) })
	// A file given twice, under its name or a link's, or copied: its
	// figures would count twice.
	link, copied, sweepCopy := filepath.Join(dir, "link.json"), filepath.Join(dir, "copy.json"), filepath.Join(dir, "sweep-copy.json")
	if err := os.Symlink(run, link); err != nil {
		t.Fatal(err)
	}
	if err := (loadgen.Report{Result: &r}).WriteFiles(copied, ""); err != nil {
		t.Fatal(err)
	}
	if err := (loadgen.Report{Levels: []loadgen.Result{r}}).WriteFiles(sweepCopy, ""); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file", nil, 2, "no FILE"},
		{"bad flag", []string{"--nope", run}, 2, "-nope"},
		{"json dir missing", []string{"--json", filepath.Join(dir, "no", "x.json"), run}, 2, "no such directory"},
		{"missing file", []string{filepath.Join(dir, "absent.json")}, 2, "absent.json"},
		{"not json", []string{write("text.json", "hello")}, 2, "not a load --json report"},
		{"other json", []string{write("other.json", `{"configs":{}}`)}, 2, "neither a result nor levels"},
		{"no histograms", []string{write("nohist.json", `{"target":"a:1","histograms":{}}`)}, 2, "no histograms"},
		{"run and sweep", []string{run, sweep}, 2, "merge runs with runs"},
		{"negative counter", []string{run, negative}, 2, "negative.json: bytes_up: negative count -5"},
		{"impossible histogram", []string{sigFigs, run}, 2, "sigfigs.json: histograms.connect.SignificantFigures: 0, but every latency histogram has 3"},
		{"a file twice", []string{run, negative, run}, 2, run + " and " + run + " are the same file: merged twice"},
		{"a link to a file", []string{run, link}, 2, run + " and " + link + " are the same file"},
		{"a copy", []string{run, copied}, 2, copied + " holds the run of " + run + " (the same start, duration and counts)"},
		{"a level copied", []string{sweep, sweepCopy}, 2, sweepCopy + ", level 1 holds the run of " + sweep + ", level 1"},
		{"sum overflows", []string{hugeA, hugeB}, 2, "huge-b.json: bytes_down: its 5000000000000000000 and the 5000000000000000000 of the results before it overflow the sum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := loadMerge(tc.args, noEnv, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, &stderr)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, &stderr)
			}
		})
	}
}

func TestLoadMergeHelp(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := loadMerge([]string{"--help"}, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, s := range []string{"Usage: tunnelprobe load merge", "--json", "TUNNELPROBE_LOAD_MERGE_JSON"} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("help lacks %q:\n%s", s, &stdout)
		}
	}
}
