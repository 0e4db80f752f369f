package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// judgeTB records what a check of the container suite reports, so that the
// checks' judgements are tested without containers.
type judgeTB struct {
	testing.TB
	errors []string
}

func (r *judgeTB) Helper()             {}
func (r *judgeTB) Logf(string, ...any) {}
func (r *judgeTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestCheckMissesJudgesTheFaultAsDockerAppliedIt: a miss of a fault that
// Docker put in place with less than faultShortestInPlace of its window
// left times Docker, once per configuration; a miss of a fault in place in
// time fails, and says when it was in place and what the window showed.
func TestCheckMissesJudgesTheFaultAsDockerAppliedIt(t *testing.T) {
	outage := func(start float64, detected bool) OutageReport {
		o := OutageReport{Start: start, End: start + ctrWindow.Seconds(), Detected: detected}
		if detected {
			d := 5.0
			o.DetectionSeconds = &d
		}
		return o
	}
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	cfg := ConfigSpec{Name: "evidence", Prober: evidenceProber(5 * time.Second)}
	tl := Timeline{
		Probes: []ProbeMark{{At: 50, Latency: 20, Passed: true}, {At: 51, Latency: 9000, Passed: false}},
		Checks: []CheckMark{
			{At: 50, Passed: true, DecidedBy: "light-probe"}, {At: 51, Passed: true, DecidedBy: "light-probe"},
			{At: 52, Passed: false},
		},
	}
	for _, tc := range []struct {
		name     string
		outages  []OutageReport
		applied  []time.Duration
		restarts []Offset
		errs     int      // how many errors
		holds    []string // what they hold between them
	}{
		{
			name:    "missed, in place late",
			outages: []OutageReport{outage(45, false), outage(135, true)},
			applied: []time.Duration{at(45 + 25), at(135.5)},
		},
		{
			name:    "missed, in place in time",
			outages: []OutageReport{outage(45, false), outage(135, true)},
			applied: []time.Duration{at(47), at(135.5)},
			errs:    1,
			holds: []string{"did not detect outage 1 (pause, 45-85 s)", "in place 2.0 s after its start",
				"probes 1 passed, 1 failed, the slowest 9.0 s; checks 1 active failed, 2 light-probe passed"},
		},
		{
			name:    "missed, never reported in place",
			outages: []OutageReport{outage(45, false)},
			errs:    1,
			holds:   []string{"never reported in place"},
		},
		{
			name:    "two missed, both in place late",
			outages: []OutageReport{outage(45, false), outage(135, false)},
			applied: []time.Duration{at(45 + 25), at(135 + 30)},
			errs:    1,
			holds:   []string{"2 outages found its prober held or their fault late: too many to judge it"},
		},
		{
			// A restart just before explains the second miss and uses up
			// no excuse: the first one's late fault is still the only one.
			name:     "missed after a restart, in place late",
			outages:  []OutageReport{outage(45, false), outage(135, false)},
			applied:  []time.Duration{at(45 + 25), at(135 + 30)},
			restarts: []Offset{100},
		},
		{
			name:    "detected, in place late",
			outages: []OutageReport{outage(45, true)},
			applied: []time.Duration{at(45 + 39)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &judgeTB{}
			tl := tl
			tl.Restarts = tc.restarts
			checkMisses(rec, &ctrLab{applied: tc.applied}, cfg, ConfigReport{Outages: tc.outages, Timeline: tl})
			if len(rec.errors) != tc.errs {
				t.Fatalf("errors %q, want %d", rec.errors, tc.errs)
			}
			all := strings.Join(rec.errors, "\n")
			for _, want := range tc.holds {
				if !strings.Contains(all, want) {
					t.Errorf("errors %q do not hold %q", all, want)
				}
			}
		})
	}
}
