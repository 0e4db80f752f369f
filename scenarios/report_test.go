package scenarios

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

func TestMeasureSplitsTheWorkingLinkFromTheOutage(t *testing.T) {
	spec := QuickSuite() // 90 s, ramp 10 s, outage 50-90 s, 20 Mbit/s
	start := time.Unix(1_000_000, 0)
	tl := Timeline{
		Probes: []ProbeMark{
			{At: 20, Passed: true}, {At: 30, Passed: false}, {At: 40, Passed: true}, {At: 45, Passed: true},
			{At: 60, Passed: false}, {At: 70, Passed: false},
		},
		Checks: []CheckMark{
			{At: 11, Latency: 50}, {At: 21, Latency: 100}, {At: 31, Latency: 9000}, {At: 55, Latency: 10000},
		},
		Restarts: []Offset{35, 72},
		Heals:    []Offset{30, 58},
		States: []StateMark{
			{At: 12, To: "healthy"}, {At: 30, To: "unhealthy"}, {At: 33, To: "healthy"}, {At: 56, To: "unhealthy"},
		},
	}
	var load loadgen.Result
	load.ConnsAchieved = 1000
	for s := int64(0); s < 90; s++ {
		sec := loadgen.Second{T: start.Unix() + s}
		if s == 35 || s == 72 {
			sec.Disruptions = 1000
		}
		load.Series = append(load.Series, sec)
	}
	// 20 Mbit/s is 2.5 MB/s: 90% over the 40 s from the ramp's end to the
	// outage.
	w := window{from: 10 * time.Second, to: 50 * time.Second, sinkBytes: 90_000_000, linkBytes: 100_000_000, complete: true}
	// The outage's goodput, from the sink's count once its start (the last
	// step at 50 s) and its end were applied: 2 MB of 100 possible.
	w.delivered = []sinkMark{{50 * time.Second, 1}, {50 * time.Second, 100_000_000}, {90 * time.Second, 102_000_000}}
	c := measure(spec, spec.Configs[0], tl, load, start, w)

	if c.FalseRestarts != 1 || c.FalseHeals != 1 || c.Restarts != 2 || c.Heals != 2 {
		t.Errorf("restarts %d (false %d), heals %d (false %d)", c.Restarts, c.FalseRestarts, c.Heals, c.FalseHeals)
	}
	if !c.OutageDetected || *c.DetectionSeconds != 8 || len(c.Outages) != 1 {
		t.Errorf("detection: %v after %v s, want the heal at 58 s: 8 s after the outage", c.OutageDetected, c.DetectionSeconds)
	}
	if c.Flaps != 1 {
		t.Errorf("%d flaps while the link worked, want 1", c.Flaps)
	}
	if c.Probes != 4 || c.ProbeSuccessRatio != 0.75 {
		t.Errorf("%d probes, %.2f passed; want 4, 0.75", c.Probes, c.ProbeSuccessRatio)
	}
	if c.CheckLatencyMS.P50 != 100 || c.CheckLatencyMS.P99 != 9000 {
		t.Errorf("check latency %+v, want p50 100 p99 9000 (the outage's check left out)", c.CheckLatencyMS)
	}
	if c.BrokenConnections != 1000 {
		t.Errorf("%d broken connections while the link worked, want 1000", c.BrokenConnections)
	}
	if u, l := c.Utilisation, c.LinkUtilisation; u == nil || l == nil || *u < 0.899 || *u > 0.901 || *l < 0.999 || *l > 1.001 {
		t.Errorf("utilisation %v, link %v; want 0.9 and 1", fmtShare(u), fmtShare(l))
	}
	if u := c.Outages[0].Utilisation; u == nil || *u < 0.0199 || *u > 0.0201 {
		t.Errorf("utilisation in the outage %v, want 0.02", u)
	}
}

func TestMeasureReportsAMissedOutage(t *testing.T) {
	spec := QuickSuite()
	c := measure(spec, spec.Configs[1], Timeline{Restarts: []Offset{95}}, loadgen.Result{}, time.Unix(0, 0), window{})
	if c.OutageDetected || c.DetectionSeconds != nil || c.Outages[0].Detected {
		t.Errorf("a restart after the outage counted as detection: %+v", c.Outages)
	}
	if c.Outages[0].Utilisation != nil {
		t.Errorf("utilisation in the outage %v, with nothing measured", *c.Outages[0].Utilisation)
	}
	rep := &Report{Name: "t", Spec: spec, Configs: map[string]ConfigReport{"probe-only": c}, Order: []string{"probe-only"}}
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "probe-only did not act on the outage") {
		t.Errorf("report.md does not say the outage was missed:\n%s", b.String())
	}
}

// report.md names the tunnel, and says how often the VPN client exited on
// its own, apart from the prober's restarts.
func TestReportSaysTheTunnelAndItsCrashes(t *testing.T) {
	spec := QuickSuite()
	spec.Tunnel = TunnelSpec{Kind: TunnelOpenVPN, Transport: "tcp"}
	c := measure(spec, spec.Configs[0], Timeline{Crashes: []Offset{30, 70}}, loadgen.Result{}, time.Unix(0, 0), window{})
	rep := &Report{Name: "t", Spec: spec, Configs: map[string]ConfigReport{spec.Configs[0].Name: c}, Order: []string{spec.Configs[0].Name}}
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Tunnel openvpn/tcp.", spec.Configs[0].Name + "'s VPN client exited on its own 2 time(s)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report.md does not say %q:\n%s", want, b.String())
		}
	}
	if rep.Crashes() != 2 {
		t.Errorf("%d crashes, want 2", rep.Crashes())
	}
}

// An outage shorter than the upstream schedule needs is reported as such;
// one it had time for, and the same check without restarts, are plain
// misses.
func TestMeasureSaysWhenTheOutageWasTooShortForTheSchedule(t *testing.T) {
	quick, def := QuickSuite(), DefaultSuite() // outages of 40 s and 200 s
	byName := func(s Spec, name string) ConfigSpec {
		for _, c := range s.Configs {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("%s has no %s", s.Name, name)
		return ConfigSpec{}
	}
	for _, tc := range []struct {
		spec     Spec
		config   string
		tooShort bool
	}{
		{quick, "upstream", true},
		{def, "upstream", false},
		{quick, "tcp-socket", false},
	} {
		c := measure(tc.spec, byName(tc.spec, tc.config), Timeline{}, loadgen.Result{}, time.Unix(0, 0), window{})
		if c.OutageDetected || c.tooShort() != tc.tooShort {
			t.Errorf("%s in %s: detected %v, too short %v; want a miss, too short %v", tc.config, tc.spec.Name, c.OutageDetected, c.tooShort(), tc.tooShort)
		}
		rep := &Report{Name: "t", Spec: tc.spec, Configs: map[string]ConfigReport{tc.config: c}, Order: []string{tc.config}}
		var b strings.Builder
		if err := rep.WriteMarkdown(&b); err != nil {
			t.Fatal(err)
		}
		if says := strings.Contains(b.String(), "its schedule needs up to 180s"); says != tc.tooShort {
			t.Errorf("%s in %s: report.md says the outage was too short: %v, want %v", tc.config, tc.spec.Name, says, tc.tooShort)
		}
	}
}

// A blip is no outage to detect: actions during it, or BlipGrace after,
// are blip actions, its time is not working time, and a one-way outage
// after it is the one detected.
func TestMeasureCountsBlipsApart(t *testing.T) {
	spec := QuickSuite() // 90 s
	spec.Link.Outages = []Window{
		{Start: D(20 * time.Second), Duration: D(10 * time.Second), Blip: true}, // blip actions until 60 s
		{Start: D(70 * time.Second), Duration: D(20 * time.Second), Direction: OutageUp},
	}
	tl := Timeline{Restarts: []Offset{25, 55, 65, 75}, Heals: []Offset{10}}
	c := measure(spec, spec.Configs[1], tl, loadgen.Result{}, time.Unix(0, 0), window{})
	if c.BlipActions != 2 || c.FalseRestarts != 1 || c.FalseHeals != 1 {
		t.Errorf("blip actions %d, false restarts %d, false heals %d; want 2, 1 (at 65 s), 1", c.BlipActions, c.FalseRestarts, c.FalseHeals)
	}
	if c.WorkingSeconds != 30 { // 0-20 and 60-70
		t.Errorf("working %v s, want 30", c.WorkingSeconds)
	}
	if len(c.Outages) != 1 || !c.OutageDetected || *c.DetectionSeconds != 5 || c.Outages[0].Direction != "up" {
		t.Errorf("outages %+v: want the one-way outage alone, detected in 5 s", c.Outages)
	}
}

// A restart or heal after an outage, once the link has worked again for
// BlipGrace, is a later action: counted and named in report.md, outside
// the false ones (the loaded phase before the first outage) and never a
// detection. Until then such a restart was counted nowhere.
func TestMeasureCountsActionsBetweenOutages(t *testing.T) {
	spec := QuickSuite() // 90 s
	spec.Duration = D(250 * time.Second)
	spec.Link.Outages = []Window{
		{Start: D(50 * time.Second), Duration: D(30 * time.Second)},              // later from 110 s
		{Start: D(150 * time.Second), Duration: D(10 * time.Second), Blip: true}, // blip actions until 190 s
		{Start: D(200 * time.Second), Duration: D(20 * time.Second)},             // later from 250 s: never
	}
	// 40: false; 60: detects the first outage; 90: in its recovery;
	// 120, 140: later; 170: a blip action; 195: later; 205: detects the
	// second; 230: in its recovery.
	tl := Timeline{Restarts: []Offset{40, 60, 120, 170, 205}, Heals: []Offset{90, 140, 195, 230}}
	c := measure(spec, spec.Configs[1], tl, loadgen.Result{}, time.Unix(0, 0), window{})
	if c.FalseRestarts != 1 || c.FalseHeals != 0 || c.BlipActions != 1 || c.LaterActions != 3 {
		t.Errorf("false restarts %d, false heals %d, blip actions %d, later actions %d; want 1, 0, 1, 3",
			c.FalseRestarts, c.FalseHeals, c.BlipActions, c.LaterActions)
	}
	if !c.OutageDetected || *c.DetectionSeconds != 10 {
		t.Errorf("detection %v after %v s, want both outages, the slowest in 10 s", c.OutageDetected, c.DetectionSeconds)
	}
	rep := &Report{Name: "t", Spec: spec, Configs: map[string]ConfigReport{"probe-only": c}, Order: []string{"probe-only"}}
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "probe-only restarted or healed 3 time(s) after an outage") {
		t.Errorf("report.md does not name the later actions:\n%s", b.String())
	}
}

// A configuration with no probe, or whose load never connected, failed: it
// was not measured. A run cut short is judged only on what was due by
// the time it stopped.
func TestFailureMarksWhatWasNotMeasured(t *testing.T) {
	spec := QuickSuite() // 90 s, ramp 10 s, 1,000 connections
	evidence := spec.Configs[4]
	if evidence.Name != "evidence" || evidence.Prober.firstProbeDue() != 22*time.Second { // 10 s delay, 1 s rounding, 1 s period, 10 s timeout
		t.Fatalf("%s: first probe due by %v, want evidence by 22 s", evidence.Name, evidence.Prober.firstProbeDue())
	}
	probed := Timeline{Probes: []ProbeMark{{At: 12, Passed: true}}}
	loaded := loadgen.Result{ConnsAchieved: 1000}
	full := 90 * time.Second
	for i, tc := range []struct {
		tl          Timeline
		load        loadgen.Result
		loadErr     error
		elapsed     time.Duration
		interrupted bool
		stall       time.Duration
		want        []string // what the reason says; none: measured
	}{
		{probed, loaded, nil, full, false, 0, nil},
		{Timeline{}, loaded, nil, full, false, 0, []string{"no probe ran in 90s"}},
		{probed, loadgen.Result{}, errors.New("dial: refused"), full, false, 0, []string{"none of its 1000 load connections opened (dial: refused)"}},
		{Timeline{}, loadgen.Result{}, nil, full, false, 0, []string{"no probe ran", "none of its 1000 load connections"}},
		// Stopped at 5 s: nothing was due yet.
		{Timeline{}, loadgen.Result{}, nil, 5 * time.Second, true, 0, nil},
		// At 15 s the load was due (the ramp and 2 s), the first probe not.
		{Timeline{}, loadgen.Result{}, nil, 15 * time.Second, true, 0, []string{"none of its 1000"}},
		{Timeline{}, loaded, nil, 30 * time.Second, true, 0, []string{"no probe ran in 30s"}},
		// A stall worth saying is named beside what failed, never alone.
		{Timeline{}, loaded, nil, full, false, 9800 * time.Millisecond, []string{"no probe ran in 90s", "could not run for up to 9.8s"}},
		{probed, loaded, nil, full, false, 9800 * time.Millisecond, nil},
	} {
		got := failure(spec, evidence, tc.tl, tc.load, tc.loadErr, tc.elapsed, tc.interrupted, tc.stall)
		if (got == "") != (len(tc.want) == 0) || (tc.stall == 0 && strings.Contains(got, "could not run")) {
			t.Errorf("case %d: failed %q, want %q", i, got, tc.want)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("case %d: failed %q, want it to say %q", i, got, w)
			}
		}
	}
	idle := spec
	idle.Load.Conns = 0
	if got := failure(idle, evidence, probed, loadgen.Result{}, nil, full, false, 0); got != "" {
		t.Errorf("an idle tunnel failed for its load: %q", got)
	}
	// Docker checks after its interval (5 s for the upstream's image), then
	// its timeout (5 s).
	if upstream := spec.Configs[5]; upstream.Prober.firstProbeDue() != 10*time.Second {
		t.Errorf("upstream: first check due by %v, want 10 s", upstream.Prober.firstProbeDue())
	}
}

// A failed configuration is reported as failed, never as an outage it
// missed or a tunnel it kept up.
func TestReportSaysAConfigurationFailed(t *testing.T) {
	spec := QuickSuite()
	start := time.Unix(0, 0)
	rep := &Report{Name: "t", Spec: spec, Configs: map[string]ConfigReport{}, Order: []string{"probe-only", "evidence"}}
	rep.Configs["probe-only"] = measure(spec, spec.Configs[1], Timeline{Probes: []ProbeMark{{At: 20, Passed: true}}}, loadgen.Result{ConnsAchieved: 1000}, start, window{})
	dead := measure(spec, spec.Configs[4], Timeline{}, loadgen.Result{}, start, window{})
	dead.Failed = failure(spec, spec.Configs[4], Timeline{}, loadgen.Result{}, nil, 89*time.Second, false, 0)
	rep.Configs["evidence"] = dead
	rep.StalledSeconds = 2.5
	if f := rep.Failures(); len(f) != 1 || f[0].Config != "evidence" || !strings.HasPrefix(f[0].Why, "no probe ran in 89s") {
		t.Errorf("failures %q, want evidence's alone", f)
	}
	var table, md strings.Builder
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(table.String(), "\n") {
		if strings.Contains(line, "evidence") && (!strings.Contains(line, "failed") || strings.Contains(line, " no ")) {
			t.Errorf("the table's evidence row: %q; want it failed, not a miss", line)
		}
	}
	text := md.String()
	if !strings.Contains(text, "evidence failed: no probe ran in 89s; none of its 1000 load connections opened") ||
		!strings.Contains(text, "1 configuration(s) failed") || !strings.Contains(text, "could not run for up to 2.5 s") {
		t.Errorf("report.md does not say evidence failed, or that the process stalled:\n%s", text)
	}
	if strings.Contains(text, "evidence did not act") || strings.Contains(text, "No restart and no heal while the link worked: probe-only, evidence") {
		t.Errorf("report.md reports the failed evidence as measured:\n%s", text)
	}
	js, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(js), `"failed":"no probe ran in 89s`) {
		t.Errorf("report.json has no failed field for evidence: %v", err)
	}
}

// An outage cut by the run's stop and not acted on is too short, not
// missed, unless the configuration's schedule had had its time (its
// detect judged that); and one outage too short does not hide another
// simply missed.
func TestCutOutagesAreNotJudgedUnlessTheScheduleHadItsTime(t *testing.T) {
	cut := func(schedule float64) ConfigReport {
		c := ConfigReport{ScheduleSeconds: schedule, Outages: []OutageReport{{Start: 10, End: 40, Detected: true}, {Start: 50, End: 70}}}
		c.leaveCutOutagesUnjudged(70)
		return c
	}
	if c := cut(0); !c.Outages[1].TooShort || c.Outages[0].TooShort || !c.tooShort() {
		t.Errorf("without a schedule: %+v, too short %v; want the cut outage alone too short", c.Outages, c.tooShort())
	}
	if c := cut(180); c.Outages[1].TooShort {
		t.Errorf("with a schedule: %+v; want the schedule's judgement (detect's) kept", c.Outages)
	}
	missed := ConfigReport{Outages: []OutageReport{{Start: 10, End: 40}, {Start: 50, End: 70, TooShort: true}}}
	if missed.tooShort() {
		t.Error("a missed outage beside a too-short one is reported too short")
	}
}

// A load whose link could not be read is not measured: null in report.json
// and "n/m" in the table, never a 0 that reads as an empty link; so are
// the probes passed of a prober that probed nothing while the link worked.
func TestUtilisationNotMeasured(t *testing.T) {
	spec := QuickSuite()
	c := measure(spec, spec.Configs[4], Timeline{}, loadgen.Result{ConnsAchieved: 1000}, time.Unix(0, 0),
		window{from: 20 * time.Second, to: 40 * time.Second})
	if c.Utilisation != nil || c.LinkUtilisation != nil {
		t.Fatalf("utilisation %v, link %v; want both not measured", fmtShare(c.Utilisation), fmtShare(c.LinkUtilisation))
	}
	js, err := json.Marshal(c)
	if err != nil || !strings.Contains(string(js), `"utilisation":null`) {
		t.Errorf("report.json's utilisation is not null: %v %s", err, js)
	}
	rep := &Report{Spec: spec, Order: []string{"evidence"}, Configs: map[string]ConfigReport{"evidence": c}}
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	row, _, _ := strings.Cut(strings.SplitN(table.String(), "\n", 2)[1], "\n")
	if strings.Count(row, " n/m") != 2 {
		t.Errorf("the table does not say the load and the probes (none) were not measured:\n%s", table.String())
	}
}
