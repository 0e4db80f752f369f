package scenarios

import (
	"fmt"
	"strconv"
)

// Expect bounds what a configuration may measure in a run, so that a
// pipeline fails when a change breaks what a configuration is relied on
// for. A nil field bounds nothing.
type Expect struct {
	// FalseRestarts, FalseHeals and BlipActions are the most restarts,
	// heals (while the link worked) and actions in blips allowed.
	FalseRestarts *int `json:"false_restarts,omitempty"`
	FalseHeals    *int `json:"false_heals,omitempty"`
	BlipActions   *int `json:"blip_actions,omitempty"`
	// Detection is the longest an outage may go undetected: every outage
	// must be met by a restart or heal within it.
	Detection *Duration `json:"detection,omitempty"`
	// ProbesPassed is the least share (0..1) of the prober's probes that
	// must pass while the link works.
	ProbesPassed *float64 `json:"probes_passed,omitempty"`
}

// A Breach is a bound a configuration did not keep in a run.
type Breach struct {
	// Bound is the field of Expect ("false_restarts", "detection"...).
	Bound string `json:"bound"`
	// Want says the bound ("at most 0", "within 10s"); Got what was
	// measured ("2", "missed").
	Want string `json:"want"`
	Got  string `json:"got"`
}

func (b Breach) String() string { return fmt.Sprintf("%s %s, want %s", b.Bound, b.Got, b.Want) }

// bounds says whether e bounds anything: a nil e, or one whose every
// field is nil, judges nothing.
func (e *Expect) bounds() bool {
	return e != nil && (e.FalseRestarts != nil || e.FalseHeals != nil || e.BlipActions != nil || e.Detection != nil || e.ProbesPassed != nil)
}

// bounded says whether the configuration name of r's spec has bounds
// (expect:) to be judged by; one without is reported as not judged, never
// as passed.
func (r *Report) bounded(name string) bool {
	for _, c := range r.Spec.Configs {
		if c.Name == name {
			return c.Expect.bounds()
		}
	}
	return false
}

// validate reports e's bad values under path; outages says whether the
// spec has an outage (not a blip) for Detection to bound.
func (e *Expect) validate(path string, outages bool, errs *specErrors) {
	if e == nil {
		return
	}
	for _, c := range []struct {
		name string
		n    *int
	}{{"false_restarts", e.FalseRestarts}, {"false_heals", e.FalseHeals}, {"blip_actions", e.BlipActions}} {
		if c.n != nil && *c.n < 0 {
			errs.bad(path+"."+c.name, "%d is negative", *c.n)
		}
	}
	if d := e.Detection; d != nil {
		switch {
		case d.Duration <= 0:
			errs.bad(path+".detection", "%v is not positive", d.Duration)
		case !outages:
			errs.bad(path+".detection", "the spec has no outage (blips aside) to detect")
		}
	}
	if p := e.ProbesPassed; p != nil && (*p < 0 || *p > 1) {
		errs.bad(path+".probes_passed", "%v is outside 0..1", *p)
	}
}

// breaches returns the bounds of e that c did not keep; nil for a nil e.
// A failed configuration measured nothing to compare (it fails the run
// anyway), nor does an interrupted run say how it would have ended.
func (e *Expect) breaches(c ConfigReport, interrupted bool) []Breach {
	if e == nil || c.Failed != "" || interrupted {
		return nil
	}
	var out []Breach
	for _, b := range []struct {
		name string
		most *int
		got  int
	}{
		{"false_restarts", e.FalseRestarts, c.FalseRestarts},
		{"false_heals", e.FalseHeals, c.FalseHeals},
		{"blip_actions", e.BlipActions, c.BlipActions},
	} {
		if b.most != nil && b.got > *b.most {
			out = append(out, Breach{Bound: b.name, Want: "at most " + strconv.Itoa(*b.most), Got: strconv.Itoa(b.got)})
		}
	}
	if d := e.Detection; d != nil {
		want := "every outage within " + d.String()
		switch {
		case !c.OutageDetected && c.tooShort():
			out = append(out, Breach{Bound: "detection", Want: want, Got: "an outage too short for its schedule to act on"})
		case !c.OutageDetected:
			out = append(out, Breach{Bound: "detection", Want: want, Got: "an outage missed"})
		case *c.DetectionSeconds > d.Seconds():
			out = append(out, Breach{Bound: "detection", Want: want, Got: fmt.Sprintf("%.2fs", *c.DetectionSeconds)})
		}
	}
	if p := e.ProbesPassed; p != nil && c.Probes > 0 && c.ProbeSuccessRatio < *p {
		out = append(out, Breach{Bound: "probes_passed", Want: fmt.Sprintf("at least %g%%", 100**p),
			Got: fmt.Sprintf("%.2f%%", 100*c.ProbeSuccessRatio)})
	}
	return out
}
