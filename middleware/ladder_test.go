package middleware_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
)

func TestLadderUnmarshalText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want middleware.Ladder
	}{
		{"2s,4s,6s", middleware.Ladder{2 * time.Second, 4 * time.Second, 6 * time.Second}},
		{" 500ms , 1m ", middleware.Ladder{500 * time.Millisecond, time.Minute}},
		{"reference", middleware.Ladder(preset.ReferenceTimeouts)},
	} {
		got, err := parseLadder(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Ladder.UnmarshalText(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		back, err := parseLadder(got.String())
		if err != nil || !slices.Equal(back, got) {
			t.Errorf("%q does not read back: %v, %v", got.String(), back, err)
		}
	}
	for _, in := range []string{"", "2s,", "2s,soon", "0s", "-1s", "NaN"} {
		if _, err := parseLadder(in); err == nil {
			t.Errorf("Ladder.UnmarshalText(%q) succeeded", in)
		}
	}
	// Each "reference" is a copy: changing one parsed ladder must not
	// change the next.
	l, _ := parseLadder("reference")
	l[0] = time.Hour
	if again, _ := parseLadder("reference"); again[0] == time.Hour {
		t.Error("ladders parsed from \"reference\" share their durations")
	}
}

// parseLadder reads s as a flag or a spec does.
func parseLadder(s string) (middleware.Ladder, error) {
	var l middleware.Ladder
	err := l.UnmarshalText([]byte(s))
	return l, err
}

func FuzzLadderUnmarshalText(f *testing.F) {
	for _, s := range []string{"2s,4s,6s", "reference", "", "1h,-1s", "0", "1e9h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := parseLadder(s)
		if err != nil {
			return
		}
		if len(l) == 0 {
			t.Fatalf("Ladder.UnmarshalText(%q) succeeded with no values", s)
		}
		for _, d := range l {
			if d <= 0 {
				t.Fatalf("Ladder.UnmarshalText(%q) accepted %v", s, d)
			}
		}
	})
}

func TestLadderJSON(t *testing.T) {
	var v struct{ Timeouts middleware.Ladder }
	for _, in := range []string{`{"Timeouts":["2s","4s"]}`, `{"Timeouts":"2s,4s"}`} {
		if err := json.Unmarshal([]byte(in), &v); err != nil || !slices.Equal(v.Timeouts, middleware.Ladder{2 * time.Second, 4 * time.Second}) {
			t.Errorf("%s: %v, %v", in, v.Timeouts, err)
		}
	}
	if b, err := json.Marshal(v); err != nil || string(b) != `{"Timeouts":["2s","4s"]}` {
		t.Errorf("Marshal = %s, %v", b, err)
	}
	if err := json.Unmarshal([]byte(`{"Timeouts":[1,2]}`), &v); err == nil || !strings.Contains(err.Error(), "durations") {
		t.Errorf("numbers: %v", err)
	}
}
