package scenarios

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"
)

// ciRuns are two runs of three configurations: one broke a bound in the
// second run, one failed in the first; the third, reference, has no
// bounds, and missed the outage.
func ciRuns() []CIRun {
	secs := func(v float64) *float64 { return &v }
	zero := 0
	bounds := &Expect{FalseRestarts: &zero}
	run := func(seed uint64, evidence, k8s ConfigReport) CIRun {
		r := &Report{Name: "quick", Seed: seed, DurationSeconds: 90, Started: time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC),
			Order: []string{"evidence", "k8s", "reference"}, Configs: map[string]ConfigReport{
				"evidence": evidence, "k8s": k8s, "reference": {FalseRestarts: 2},
			}}
		r.Spec.Configs = []ConfigSpec{{Name: "evidence", Expect: bounds}, {Name: "k8s", Expect: bounds}, {Name: "reference"}}
		return CIRun{Name: fmt.Sprintf("quick (seed %d)", seed), Report: r}
	}
	ok := ConfigReport{OutageDetected: true, DetectionSeconds: secs(4)}
	broke := ok
	broke.FalseRestarts = 1
	broke.Breaches = []Breach{{Bound: "false_restarts", Want: "at most 0", Got: "1"}}
	return []CIRun{
		run(1, ok, ConfigReport{Failed: "no probe ran in 90s"}),
		run(2, broke, ok),
	}
}

// The JUnit file has the elements and attributes the schema requires
// (testsuites; testsuite with name and tests; testcase with name and
// classname), a failure for each broken bound with the figures, an error
// for a configuration that failed.
func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, ciRuns()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name
		Tests   int `xml:"tests,attr"`
		Suites  []struct {
			Name  string `xml:"name,attr"`
			Tests string `xml:"tests,attr"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failures  []struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
				Skipped *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"skipped"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if doc.XMLName.Local != "testsuites" || len(doc.Suites) != 2 || doc.Tests != 6 {
		t.Fatalf("root %s with %d suites and %d tests:\n%s", doc.XMLName.Local, len(doc.Suites), doc.Tests, b.String())
	}
	for _, s := range doc.Suites {
		if s.Name == "" || s.Tests != "3" || len(s.Cases) != 3 {
			t.Errorf("suite %q: tests %q, %d cases", s.Name, s.Tests, len(s.Cases))
		}
		for _, c := range s.Cases {
			if c.Name == "" || c.Classname != "tunnelprobe.scenario.quick" || !strings.Contains(c.SystemOut, "false restarts") {
				t.Errorf("case %+v: want a name, the classname and the figures", c)
			}
		}
	}
	first, second := doc.Suites[0].Cases, doc.Suites[1].Cases
	if first[1].Error == nil || !strings.Contains(first[1].Error.Message, "no probe ran") || len(first[0].Failures) != 0 {
		t.Errorf("run 1: k8s error %+v, evidence failures %+v; want k8s in error, evidence passing", first[1].Error, first[0].Failures)
	}
	if f := second[0].Failures; len(f) != 1 || f[0].Message != "false_restarts 1, want at most 0" || !strings.Contains(f[0].Text, "measured 1") {
		t.Errorf("run 2: evidence failures %+v, want the broken bound", f)
	}
	// reference has no bounds: whatever it measured (an outage missed, two
	// restarts), it is not judged, never passed.
	for _, s := range doc.Suites {
		if ref := s.Cases[2]; ref.Skipped == nil || ref.Skipped.Message != "no expect: bounds; not judged" ||
			!strings.Contains(ref.Skipped.Text, "false restarts 2, ") || !strings.Contains(ref.SystemOut, "no outage detected") {
			t.Errorf("%s: reference skipped %+v, out %q; want not judged, its figures kept", s.Name, ref.Skipped, ref.SystemOut)
		}
	}
	if !strings.Contains(b.String(), `skipped="2"`) {
		t.Errorf("the two configurations without bounds are not counted as skipped:\n%s", b.String())
	}
	if !strings.Contains(b.String(), `failures="1"`) || !strings.Contains(b.String(), `errors="1"`) {
		t.Errorf("the counts are not in the attributes:\n%s", b.String())
	}
}

// The CI summary says at once whether every bound held, then each run and
// configuration, then the broken bounds.
func TestWriteCISummary(t *testing.T) {
	var b strings.Builder
	if err := WriteCISummary(&b, ciRuns()); err != nil {
		t.Fatal(err)
	}
	interrupted := []CIRun{{Name: "quick (seed 1)", Report: &Report{Interrupted: true, Order: []string{"x"}, Configs: map[string]ConfigReport{"x": {}}}}}
	interrupted[0].Report.Spec.Configs = []ConfigSpec{{Name: "x", Expect: &Expect{}}}
	var ib strings.Builder
	if err := WriteCISummary(&ib, interrupted); err != nil || !strings.Contains(ib.String(), "bounds not judged in 1 interrupted run(s)") {
		t.Errorf("an interrupted run's summary (%v):\n%s", err, ib.String())
	}
	for _, want := range []string{
		"## tunnelprobe scenario: 1 bound(s) broken, 1 configuration(s) failed; 2 configuration(s) not judged (no expect: bounds)\n",
		"| quick (seed 1) | reference | not judged (no expect: bounds) | false restarts 2, ",
		"| quick (seed 2) | evidence | **1 bound(s) broken** | false restarts 1, ",
		"| quick (seed 1) | k8s | failed: no probe ran in 90s | ",
		"- **quick (seed 2)**, evidence: false_restarts 1, want at most 0\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// A configuration without bounds is not judged, and the headline counts it
// apart: it never makes "every bound held" nor "pass".
func TestCISummaryNotJudged(t *testing.T) {
	held := ciRuns()[1:]
	r := *held[0].Report
	r.Configs = map[string]ConfigReport{"evidence": {}, "k8s": {}, "reference": {FalseRestarts: 2}}
	held[0].Report = &r
	unbounded := *held[0].Report
	unbounded.Spec.Configs = nil
	for _, tc := range []struct {
		runs []CIRun
		want []string
	}{
		{held, []string{
			"## tunnelprobe scenario: every bound held (2 configuration(s) judged in 1 run(s)); 1 configuration(s) not judged (no expect: bounds)\n",
			"| quick (seed 2) | evidence | pass | ", "| quick (seed 2) | reference | not judged (no expect: bounds) | ",
		}},
		{[]CIRun{{Name: "quick (seed 2)", Report: &unbounded}}, []string{
			"## tunnelprobe scenario: 1 run(s), nothing judged: 3 configuration(s) without expect: bounds\n",
		}},
	} {
		var b strings.Builder
		if err := WriteCISummary(&b, tc.runs); err != nil {
			t.Fatal(err)
		}
		for _, want := range tc.want {
			if !strings.Contains(b.String(), want) {
				t.Errorf("summary lacks %q:\n%s", want, b.String())
			}
		}
		if strings.Contains(b.String(), "| reference | pass |") {
			t.Errorf("a configuration without bounds passed:\n%s", b.String())
		}
	}
}
