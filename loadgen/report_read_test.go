package loadgen_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// validRun returns a Result as one process of a 4.5 s run writes it: its
// series adds up to its totals, its histograms to its percentiles.
func validRun(t testing.TB) loadgen.Result {
	t.Helper()
	start := time.Date(2026, 1, 2, 3, 4, 5, 250e6, time.UTC)
	connect, probe := loadgen.NewLatencyHistogram(), loadgen.NewLatencyHistogram()
	r := loadgen.Result{
		Target: "127.0.0.1:9000", Path: "direct", Start: start, DurationSeconds: 4.5, Processes: 1,
		ConnsRequested: 100, Errors: map[string]int64{"refused": 2, "reset": 1},
	}
	for i := range 5 {
		s := loadgen.Second{
			T: start.Unix() + int64(i), BytesUp: 1_000_000, BytesDown: 2_000_000, Open: int64(20 * (i + 1)),
			Connects: 20, ConnectErrors: min(int64(i), 1), Probes: 1, CPUSeconds: 0.25,
			RSSBytes: 30 << 20, FDs: int64(25 * (i + 1)), Threads: 9, TCPRetransmits: 4,
		}
		for j := range 20 {
			loadgen.RecordLatency(connect, time.Duration(150+10*j)*time.Microsecond)
		}
		if i == 3 {
			s.ProbeFailures = 1
		} else {
			loadgen.RecordLatency(probe, time.Duration(5+i)*time.Millisecond)
			s.ProbeMaxMS = float64(5 + i)
		}
		r.Series = append(r.Series, s)
		r.BytesUp += s.BytesUp
		r.BytesDown += s.BytesDown
		r.Probes += s.Probes
		r.ProbeFailures += s.ProbeFailures
		r.ConnsAchieved = max(r.ConnsAchieved, s.Open)
	}
	r.Disruptions = 1
	r.Histograms = loadgen.Histograms{Connect: connect.Export(), Probe: probe.Export()}
	r.ConnectLatencyMS = loadgen.Summarize(connect)
	r.ProbeLatencyMS = loadgen.Summarize(probe)
	return r
}

// writeReport writes rep with WriteJSON to dir/name and returns the path.
func writeReport(t testing.TB, dir, name string, rep loadgen.Report) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := rep.WriteFiles(path, ""); err != nil {
		t.Fatal(err)
	}
	return path
}

// latencyIndex returns the index in a latency histogram's counts of the
// samples of d.
func latencyIndex(t testing.TB, d time.Duration) int {
	t.Helper()
	h := loadgen.NewLatencyHistogram()
	loadgen.RecordLatency(h, d)
	i := slices.Index(h.Export().Counts, 1)
	if i < 0 {
		t.Fatalf("no count for %v", d)
	}
	return i
}

func TestReadJSONAcceptsWhatLoadWrites(t *testing.T) {
	dir := t.TempDir()
	r := validRun(t)
	run := writeReport(t, dir, "run.json", loadgen.Report{Result: &r})
	sweep := writeReport(t, dir, "sweep.json", loadgen.Report{Levels: []loadgen.Result{validRun(t), validRun(t)}})
	for _, f := range []string{run, sweep} {
		if _, err := loadgen.ReadJSON(f); err != nil {
			t.Errorf("ReadJSON: %v", err)
		}
	}
	// A merge of what ReadJSON accepts is itself accepted, so that merged
	// reports merge again.
	rep, err := loadgen.ReadJSON(run)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loadgen.MergeReports([]loadgen.Report{rep, rep}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loadgen.ReadJSON(writeReport(t, dir, "merged.json", m)); err != nil {
		t.Errorf("a merged report: %v", err)
	}
}

// TestReadJSONRefusesImpossibleFields has a case for each fault of a
// report that load cannot write. Before ReadJSON validated, it accepted
// every one of them.
func TestReadJSONRefusesImpossibleFields(t *testing.T) {
	dir := t.TempDir()
	fullCounts := func(r *loadgen.Result) []int64 {
		// Counts as NewLatencyHistogram exports them, not trimmed.
		h := loadgen.NewLatencyHistogram()
		c := h.Export().Counts
		copy(c, r.Histograms.Connect.Counts)
		r.Histograms.Connect.Counts = c
		return c
	}
	top := latencyIndex(t, time.Hour)
	for _, tc := range []struct {
		name   string
		mutate func(r *loadgen.Result)
		want   string
	}{
		// Histograms.
		{"counts above the range", func(r *loadgen.Result) {
			// Samples past one hour, which RecordLatency clamps to: the
			// p99 of such a file came out at 3,797,942 ms.
			c := fullCounts(r)
			c[len(c)-1] = 90
			r.ConnectLatencyMS.Count += 90
		}, "histograms.connect.Counts[" + itoa(len(loadgen.NewLatencyHistogram().Export().Counts)-1) + "]: 90 samples outside 1 to 3600000000 µs"},
		{"counts just above the range", func(r *loadgen.Result) {
			c := fullCounts(r)
			c[top+1] = 1
			r.ConnectLatencyMS.Count++
		}, "histograms.connect.Counts[" + itoa(top+1) + "]: 1 samples outside"},
		{"counts below the range", func(r *loadgen.Result) {
			r.Histograms.Connect.Counts[0] = 4 // 0 µs
			r.ConnectLatencyMS.Count += 4
		}, "histograms.connect.Counts[0]: 4 samples outside"},
		{"more counts than the histogram", func(r *loadgen.Result) {
			c := fullCounts(r)
			r.Histograms.Connect.Counts = append(c, 1, 1)
		}, "histograms.connect.Counts: " + itoa(len(loadgen.NewLatencyHistogram().Export().Counts)+2) + " entries, more than its kind of file holds: at most " +
			itoa(len(loadgen.NewLatencyHistogram().Export().Counts))},
		{"significant figures 0", func(r *loadgen.Result) {
			r.Histograms.Probe.SignificantFigures = 0
		}, "histograms.probe.SignificantFigures: 0, but every latency histogram has 3"},
		{"another highest value", func(r *loadgen.Result) {
			r.Histograms.Connect.HighestTrackableValue = 1 << 62
		}, "histograms.connect.HighestTrackableValue: 4611686018427387904"},
		{"another lowest value", func(r *loadgen.Result) {
			r.Histograms.Connect.LowestTrackableValue = 1000
		}, "histograms.connect.LowestTrackableValue: 1000"},
		{"conversion ratio", func(r *loadgen.Result) {
			r.Histograms.Connect.IntegerToDoubleConversionRatio = 0.001
		}, "histograms.connect.IntegerToDoubleConversionRatio"},
		{"negative count", func(r *loadgen.Result) {
			i := latencyIndex(t, 5*time.Millisecond)
			r.Histograms.Probe.Counts[i] = -3
		}, "histograms.probe.Counts[" + itoa(latencyIndex(t, 5*time.Millisecond)) + "]: negative count -3"},
		{"counts overflow", func(r *loadgen.Result) {
			i := latencyIndex(t, 160*time.Microsecond)
			r.Histograms.Connect.Counts[i] = math.MaxInt64
		}, "histograms.connect.Counts[" + itoa(latencyIndex(t, 160*time.Microsecond)) + "]: the counts add up to more than int64 holds"},
		{"counts do not match the count", func(r *loadgen.Result) {
			r.ConnectLatencyMS.Count = 99
		}, "connect_latency_ms.count: 99, but the histogram holds 100 samples"},
		{"probe count is not the passing probes", func(r *loadgen.Result) {
			r.Probes = 9
		}, "probe_latency_ms.count: 4, but 9 probes ran and 1 failed"},
		{"percentiles out of order", func(r *loadgen.Result) {
			r.ConnectLatencyMS.P90 = r.ConnectLatencyMS.P50 / 2
		}, "connect_latency_ms.p90:"},
		{"percentile above the histogram", func(r *loadgen.Result) {
			r.ProbeLatencyMS.Max = 3_797_942
		}, "probe_latency_ms.max: 3.797942e+06 ms is not between"},
		{"percentiles without samples", func(r *loadgen.Result) {
			r.Histograms.Probe = loadgen.NewLatencyHistogram().Export()
			r.ProbeFailures, r.ProbeLatencyMS.Count = r.Probes, 0
		}, "probe_latency_ms.p50: 6.003 ms without a sample"},

		// Counters near int64's maximum, negative counters.
		{"bytes near int64's maximum", func(r *loadgen.Result) {
			r.BytesUp = math.MaxInt64 - 97
		}, "bytes_up: 9223372036854775710 is more than 1 processes count in 4.5 s"},
		{"series bytes near int64's maximum", func(r *loadgen.Result) {
			r.Series[2].BytesDown = math.MaxInt64
		}, "series[2].bytes_down: 9223372036854775807 is more than"},
		{"negative bytes", func(r *loadgen.Result) { r.BytesDown = -1 }, "bytes_down: negative count -1"},
		{"negative disruptions", func(r *loadgen.Result) { r.Disruptions = -2 }, "disruptions: negative count -2"},
		{"negative probes", func(r *loadgen.Result) { r.Probes, r.ProbeFailures = -1, -5 }, "probes: negative count -1"},
		{"negative error count", func(r *loadgen.Result) { r.Errors["refused"] = -2 }, "errors.refused: negative count -2"},
		{"negative series connects", func(r *loadgen.Result) { r.Series[1].Connects = -4 }, "series[1].connects: negative count -4"},
		{"negative open", func(r *loadgen.Result) { r.Series[1].Open = -4 }, "series[1].open: negative reading -4"},
		{"negative rss", func(r *loadgen.Result) { r.Series[4].RSSBytes = -1 }, "series[4].rss_bytes: negative reading -1"},
		{"negative cpu", func(r *loadgen.Result) { r.Series[0].CPUSeconds = -0.5 }, "series[0].cpu_seconds: -0.5 s"},
		{"negative probe max", func(r *loadgen.Result) { r.Series[0].ProbeMaxMS = -1 }, "series[0].probe_max_ms: -1 ms"},
		{"negative conns achieved", func(r *loadgen.Result) {
			r.ConnsAchieved = -9223372036854775710
		}, "conns_achieved: negative count -9223372036854775710"},

		// What a run is.
		{"no start", func(r *loadgen.Result) { r.Start = time.Time{} }, "start: missing"},
		{"start before 1970", func(r *loadgen.Result) {
			r.Start = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
		}, "start: 1900-01-01T00:00:00Z is outside 1970-01-01 to 2262-04-11"},
		{"negative duration", func(r *loadgen.Result) { r.DurationSeconds = -1 }, "duration_seconds: negative duration -1"},
		{"ramp longer than the run", func(r *loadgen.Result) {
			ramp := r.DurationSeconds + 1
			r.RampSeconds = &ramp
		}, "ramp_seconds: 5.5, but a ramp lasts from 0 to the run's 4.5 s"},
		{"negative ramp", func(r *loadgen.Result) {
			ramp := -0.25
			r.RampSeconds = &ramp
		}, "ramp_seconds: -0.25, but a ramp lasts"},
		{"duration past 2262", func(r *loadgen.Result) { r.DurationSeconds = 1e10 }, "duration_seconds: 1e+10 s from the start ends after 2262-04-11"},
		{"no process", func(r *loadgen.Result) { r.Processes = 0 }, "processes: 0, but a run has at least one"},
		{"more processes than connections", func(r *loadgen.Result) {
			r.Processes = 1 << 40
		}, "processes: 1099511627776 for 100 connections requested"},
		{"no connection requested", func(r *loadgen.Result) { r.ConnsRequested = 0 }, "conns_requested: 0"},
		{"more achieved than requested", func(r *loadgen.Result) {
			r.ConnsAchieved = 101
		}, "conns_achieved: 101 of 100 requested"},
		{"more failures than probes", func(r *loadgen.Result) {
			r.ProbeFailures = 6
		}, "probe_failures: 6 of 5 probes"},
		{"unknown error kind", func(r *loadgen.Result) { r.Errors["ssl"] = 1 }, "errors.ssl: not a kind load counts"},

		// The series: a second each, within the run.
		{"series longer than the run", func(r *loadgen.Result) {
			for i := range 100 {
				s := r.Series[4]
				s.T += int64(i + 1)
				r.Series = append(r.Series, s)
			}
		}, "series: 105 seconds, but a run of 4.5 s has at most 8"},
		{"series second far outside the run", func(r *loadgen.Result) {
			r.Series[4].T = math.MaxInt64
		}, "series[4].t: second 9223372036854775807 is outside the run"},
		{"series second before the run", func(r *loadgen.Result) {
			r.Series[0].T -= 5
		}, "series[0].t: second 1767323040 is outside the run"},
		{"series second twice", func(r *loadgen.Result) {
			r.Series[3].T = r.Series[2].T
		}, "series[3].t: second 1767323047 follows second 1767323047"},
		{"more open than achieved", func(r *loadgen.Result) {
			r.Series[2].Open = 101
		}, "series[2].open: 101, more than conns_achieved (100)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := validRun(t)
			tc.mutate(&r)
			path := writeReport(t, dir, "b.json", loadgen.Report{Result: &r})
			_, err := loadgen.ReadJSON(path)
			if want := path + ": " + tc.want; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("ReadJSON: %v\nwant an error with %q", err, want)
			}
		})
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// TestReadJSONRefusesImpossibleLevels checks that the fields of a sweep's
// levels are named with their level.
func TestReadJSONRefusesImpossibleLevels(t *testing.T) {
	bad := validRun(t)
	bad.Series[1].BytesUp = -7
	path := writeReport(t, t.TempDir(), "sweep.json", loadgen.Report{Levels: []loadgen.Result{validRun(t), bad}})
	want := path + ": levels[1].series[1].bytes_up: negative count -7"
	if _, err := loadgen.ReadJSON(path); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ReadJSON: %v\nwant an error with %q", err, want)
	}
}

// denseReport returns a valid report's JSON with the array at key
// replaced by n copies of elem.
func denseReport(t testing.TB, key, elem string, n int) []byte {
	t.Helper()
	r := validRun(t)
	b, err := json.Marshal(loadgen.Report{Result: &r})
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	top[key] = json.RawMessage("[" + strings.Repeat(elem+",", n-1) + elem + "]")
	if key == "levels" {
		top = map[string]json.RawMessage{key: top[key]}
	}
	b, err = json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadJSONRefusesDenseArrays: entries written smaller than load ever
// writes them would decode into far more memory than the file takes; the
// array is named (the first of a key given twice is decoded too).
func TestReadJSONRefusesDenseArrays(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"series of empty entries", denseReport(t, "series", "{}", 20_000), "series: 20000 entries in 60001 bytes would take 2560000 bytes"},
		{"series of bare seconds", denseReport(t, "series", `{"t":1767323045}`, 50_000), "series: 50000 entries in 850001 bytes"},
		{"levels of empty results", denseReport(t, "levels", "{}", 20_000), "levels: 20000 entries in 60001 bytes"},
		{"nested dense series", []byte(`{"levels":[{"series":[` + strings.Repeat("{},", 19_999) + `{}],"target":"` + strings.Repeat("x", 400) + `"}]}`),
			"levels[0].series: 20000 entries in 60001 bytes"},
		{"series given twice", []byte(`{"series":[` + strings.Repeat("{},", 19_999) + `{}],"series":[]}`), "series: 20000 entries in 60001 bytes"},
		{"error kinds given twice", []byte(`{"target":"a:1","errors":{"refused":1,"refused":1,"refused":1,"refused":1,"refused":1,"refused":1,"refused":1}}`),
			"errors: 7 entries, more than its kind of file holds: at most 6"},
		{"counts past the histogram", []byte(`{"levels":[{"histograms":{"probe":{"counts":[` + strings.Repeat("0,", 23_552) + `0]}}}]}`),
			"levels[0].histograms.probe.counts: 23553 entries, more than its kind of file holds: at most 23552"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "dense.json")
			if err := os.WriteFile(path, tc.body, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := loadgen.ReadJSON(path); err == nil || !strings.Contains(err.Error(), path+": "+tc.want) {
				t.Errorf("ReadJSON: %v\nwant an error with %q", err, tc.want)
			}
		})
	}
}

// TestReadJSONMemoryBoundedBySize reads a file of 600 kB that holds 200,000
// series entries written as {}: decoded, they would take 25.6 MB and the
// merge's map of seconds as much again (a 30 MB file of them took 1.67 GB).
func TestReadJSONMemoryBoundedBySize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dense.json")
	body := denseReport(t, "series", "{}", 200_000)
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := loadgen.ReadJSON(path)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Error("ReadJSON accepted 200,000 empty series entries")
	}
	// Reading the file takes its size (twice at most, as it grows); the
	// checks little more.
	if alloc, limit := after.TotalAlloc-before.TotalAlloc, uint64(3*len(body)+1<<20); alloc > limit {
		t.Errorf("ReadJSON of %d bytes allocated %d bytes, want at most %d", len(body), alloc, limit)
	}
}

func TestReadJSONRefusesLargeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the file's size is what counts, and it is never read.
	if err := f.Truncate(loadgen.MaxReportSize + 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = loadgen.ReadJSON(path)
	if want := path + ": 268435457 bytes, more than the 268435456 (256 MiB)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ReadJSON: %v\nwant an error with %q", err, want)
	}
}

// TestReadJSONRefusesWhatIsNoFile: a link to /dev/zero, which never ends,
// and a named pipe, which has no size and blocks its reader, are refused
// unread (/dev/zero took a gigabyte of memory before it was refused as too
// large).
func TestReadJSONRefusesWhatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	zero, fifo := filepath.Join(dir, "zero.json"), filepath.Join(dir, "fifo.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, kind := range map[string]string{zero: "a device", fifo: "a named pipe"} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := loadgen.ReadJSON(name)
		runtime.ReadMemStats(&after)
		if want := name + ": " + kind + ", not a regular file"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadJSON: %v\nwant an error with %q", err, want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("ReadJSON(%s) allocated %d bytes before refusing it", name, alloc)
		}
	}
}

// TestMergeReportsRefusesOverflow merges reports each of which is valid,
// but whose sums overflow int64: the merge refuses rather than print a
// wrapped figure (-9223372036854775710 bytes).
func TestMergeReportsRefusesOverflow(t *testing.T) {
	// Counters as large as these take a run of over 100 years, which the
	// bounds of one report allow.
	long := func(mutate func(r *loadgen.Result)) loadgen.Report {
		r := validRun(t)
		r.Start = time.Unix(0, 0).UTC()
		r.DurationSeconds = 4e9
		for i := range r.Series {
			r.Series[i].T = int64(i)
		}
		mutate(&r)
		return loadgen.Report{Result: &r}
	}
	for _, tc := range []struct {
		name   string
		mutate func(r *loadgen.Result)
		want   string
	}{
		{"bytes", func(r *loadgen.Result) { r.BytesUp = math.MaxInt64/2 + 100 },
			"merge: b.json: bytes_up: its 4611686018427388003 and the 4611686018427388003 of the results before it overflow the sum"},
		{"errors", func(r *loadgen.Result) { r.Errors["timeout"] = 5e18 },
			"merge: b.json: errors.timeout: its 5000000000000000000 and the 5000000000000000000"},
		{"requested", func(r *loadgen.Result) { r.ConnsRequested = math.MaxInt64/2 + 1 },
			"merge: b.json: conns_requested:"},
		{"series", func(r *loadgen.Result) {
			r.Processes, r.ConnsRequested = 1<<22, 1<<22
			r.Series[1].BytesDown = math.MaxInt64/2 + 1
		}, "merge: b.json: series second 1: bytes_down: the sum overflows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rep := long(tc.mutate)
			var reports []loadgen.Report
			var names []string
			for _, name := range []string{"a.json", "b.json"} {
				read, err := loadgen.ReadJSON(writeReport(t, dir, name, rep))
				if err != nil {
					t.Fatalf("ReadJSON: %v", err)
				}
				reports, names = append(reports, read), append(names, name)
			}
			if _, err := loadgen.MergeReports(reports, names); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("MergeReports: %v\nwant an error with %q", err, tc.want)
			}
			// In a sweep, the level says where.
			sweep := loadgen.Report{Levels: []loadgen.Result{*rep.Result}}
			if _, err := loadgen.MergeReports([]loadgen.Report{sweep, sweep}, names); err == nil || !strings.Contains(err.Error(), "level 1: "+tc.want) {
				t.Errorf("MergeReports of sweeps: %v\nwant an error with %q", err, "level 1: "+tc.want)
			}
		})
	}
}

// FuzzReadJSON: ReadJSON never panics, and whatever it accepts merges, into
// percentiles within the latency histogram's range, and is summarised,
// written and plotted as load merge does.
func FuzzReadJSON(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "report.json.golden"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	r := validRun(f)
	for _, rep := range []loadgen.Report{{Result: &r}, {Levels: []loadgen.Result{validRun(f), validRun(f)}}} {
		b, err := os.ReadFile(writeReport(f, f.TempDir(), "seed.json", rep))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		compact := new(bytes.Buffer)
		if err := json.Compact(compact, b); err != nil {
			f.Fatal(err)
		}
		f.Add(compact.Bytes())
	}
	f.Add(denseReport(f, "series", "{}", 50))
	f.Add([]byte(`{"levels":[{},{}]}`))
	f.Add([]byte(`{"target":"a:1","histograms":{"connect":{"SignificantFigures":0,"Counts":[1,-1]}}}`))

	top := loadgen.NewLatencyHistogram()
	loadgen.RecordLatency(top, time.Hour)
	maxMS := loadgen.Summarize(top).Max
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "f.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := loadgen.ReadJSON(path)
		if err != nil {
			return
		}
		m, err := loadgen.MergeReports([]loadgen.Report{rep}, []string{"f.json"})
		if err != nil {
			t.Fatalf("MergeReports of an accepted report: %v", err)
		}
		results := m.Levels
		if m.Result != nil {
			results = []loadgen.Result{*m.Result}
		}
		for _, res := range results {
			for _, p := range []loadgen.Percentiles{res.ConnectLatencyMS, res.ProbeLatencyMS} {
				if p.Count < 0 || p.P50 < 0 || p.P50 > p.P90 || p.P90 > p.P99 || p.P99 > p.Max || p.Max > maxMS {
					t.Fatalf("merged percentiles %+v, outside 0 to %v ms", p, maxMS)
				}
			}
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("the merge of an accepted report is not one: %v", err)
		}
		// What load merge prints and plots of it.
		if err := m.WriteSummaries(io.Discard); err != nil {
			t.Fatalf("the summary of an accepted report: %v", err)
		}
		if err := m.WriteFiles(filepath.Join(t.TempDir(), "m.json"), filepath.Join(t.TempDir(), "m.png")); err != nil {
			t.Fatalf("the files of an accepted report: %v", err)
		}
		// Merged with itself every counter doubles: a sum may overflow,
		// and must then be refused as such.
		if _, err := loadgen.MergeReports([]loadgen.Report{rep, rep}, []string{"a.json", "b.json"}); err != nil && !strings.Contains(err.Error(), "overflow") {
			t.Fatalf("MergeReports of an accepted report with itself: %v", err)
		}
	})
}
