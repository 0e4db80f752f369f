package main

import "testing"

// The first progress line is found in a single run's and in a matrix's,
// whose lines start with the run and the time left.
func TestProgressLine(t *testing.T) {
	for line, want := range map[string]bool{
		"[   5s/90s loaded] false restarts/heals: none":                         true,
		"run 1/10, ~31m40s left [  70s/320s loaded] false restarts/heals: none": true,
		`scenario "quick": 7 configurations, 1m30s, seed 1`:                     false,
		"10 run(s) (10 condition(s), 1 pass(es)): at least 31m40s":              false,
	} {
		if progressLine.MatchString(line) != want {
			t.Errorf("%q: match %v, want %v", line, !want, want)
		}
	}
}
