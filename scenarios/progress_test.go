package scenarios

import (
	"testing"
	"time"
)

// The progress line counts what the table will: restarts and heals while
// the link worked (a blip's aside), and who acted on the outage and how
// fast; it stays short when nothing happened.
func TestProgressLine(t *testing.T) {
	spec := Spec{Duration: Duration{360 * time.Second}}
	spec.Link.Outages = []Window{
		{Start: Duration{60 * time.Second}, Duration: Duration{10 * time.Second}, Blip: true},
		{Start: Duration{200 * time.Second}, Duration: Duration{60 * time.Second}},
	}
	names := []string{"reference", "evidence", "upstream"}
	busy := []Timeline{
		{Restarts: []Offset{30, 65, 204}, Heals: []Offset{40}}, // 30 and 40 false, 65 in the blip
		{Restarts: []Offset{203.5}},
		{},
	}
	for _, tc := range []struct {
		at   time.Duration
		tls  []Timeline
		want string
	}{
		{5 * time.Second, []Timeline{{}, {}, {}}, "[   5s/360s loaded] false restarts/heals: none"},
		{62 * time.Second, busy, "[  62s/360s blip] false restarts/heals: reference 1/1"},
		{210 * time.Second, busy, "[ 210s/360s OUTAGE] false restarts/heals: reference 1/1 | acted on the outage: reference 4s, evidence 4s"},
	} {
		got := progressLine(spec, tc.at, names, tc.tls)
		if got != tc.want {
			t.Errorf("at %v:\n got %q\nwant %q", tc.at, got, tc.want)
		}
		if len(got) > 120 {
			t.Errorf("at %v: a line of %d characters", tc.at, len(got))
		}
	}
}
