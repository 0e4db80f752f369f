package reaper

import (
	"fmt"
	"testing"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		line  string
		state byte
		ppid  int
		ok    bool
	}{
		{"42 (sleep) Z 1 42 42 0 -1", 'Z', 1, true},
		{"43 (a b) c) (d) S 17 43", 'S', 17, true}, // a comm with spaces and parentheses
		{"44 (x) R", 0, 0, false},
		{"44 x Z 1", 0, 0, false},
		{"44 (x) ZZ 1", 0, 0, false},
		{"44 (x) Z one", 0, 0, false},
	} {
		state, ppid, ok := parseStat([]byte(tc.line))
		if state != tc.state || ppid != tc.ppid || ok != tc.ok {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tc.line, state, ppid, ok, tc.state, tc.ppid, tc.ok)
		}
	}
}

// Whatever a process names itself, its line parses to its state and parent.
func FuzzParseStat(f *testing.F) {
	f.Add("sleep", byte('Z'), 1)
	f.Add("a) Z 7 (b", byte('S'), 1714)
	f.Fuzz(func(t *testing.T, comm string, state byte, ppid int) {
		if state <= ' ' || state == ')' || state > '~' || ppid < 0 {
			return // not what the kernel writes
		}
		line := fmt.Sprintf("99 (%s) %c %d 99 99 0 -1 4194560", comm, state, ppid)
		got, gotPpid, ok := parseStat([]byte(line))
		if !ok || got != state || gotPpid != ppid {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d", line, got, gotPpid, ok, state, ppid)
		}
	})
}
