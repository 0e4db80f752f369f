package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// helpFlag matches a flag and, on a later line of the help, its variable.
var helpFlag = regexp.MustCompile(`(?m)^  --([a-z0-9-]+)[^\n]*\n(?:    \t[^\n]*\n)*?    \t\[\$(TUNNELPROBE_[A-Z0-9_]+)\]`)

// TestEnvNamesMeanOneThing: across every command and role, one environment
// variable sets one flag of one command, so that a variable set for one
// (TUNNELPROBE_RATE for the lab's link, TUNNELPROBE_TIMEOUT for serve)
// never sets another's (load's pacing, the probe's timeout in serve's
// container).
func TestEnvNamesMeanOneThing(t *testing.T) {
	t.Parallel()
	owner := map[string]string{} // variable -> "command --flag"
	for _, cmd := range [][]string{
		{"serve"}, {"probe"}, {"load"}, {"load", "merge"}, {"sink"}, {"scenario"},
		{"lab"}, {"lab", "server"}, {"lab", "link"}, {"lab", "client"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), append(cmd, "--help"), envMap(nil), &stdout, &stderr); code != 0 {
			t.Fatalf("%s --help: exit %d: %s", cmd, code, &stderr)
		}
		matches := helpFlag.FindAllStringSubmatch(stdout.String(), -1)
		if len(matches) == 0 {
			t.Fatalf("%s --help lists no flag with its variable:\n%s", cmd, &stdout)
		}
		for _, m := range matches {
			who := strings.Join(cmd, " ") + " --" + m[1]
			if other, ok := owner[m[2]]; ok {
				t.Errorf("%s sets both %s and %s", m[2], other, who)
			}
			owner[m[2]] = who
		}
	}
	for name, want := range map[string]string{
		"TUNNELPROBE_TIMEOUT":       "serve --timeout",
		"TUNNELPROBE_METRICS":       "serve --metrics",
		"TUNNELPROBE_PROBE_TIMEOUT": "probe --timeout",
		"TUNNELPROBE_LOAD_RATE":     "load --rate",
		"TUNNELPROBE_LOAD_METRICS":  "load --metrics",
		"TUNNELPROBE_LAB_RATE":      "lab --rate",
		"TUNNELPROBE_LAB_LINK_RATE": "lab link --rate",
	} {
		if owner[name] != want {
			t.Errorf("%s sets %q, want %s", name, owner[name], want)
		}
	}
}
