package rate

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
	}{
		{"20mbit", 20_000_000}, {"20Mbit", 20_000_000}, {"100kbit", 100_000}, {"1gbit", 1_000_000_000},
		{"5MB/s", 40_000_000}, {"1KiB/s", 8192}, {"10Mb/s", 10_000_000}, {"1500", 1500}, {"2.5mbit", 2_500_000},
		{"8bit", 8}, {"unlimited", 0}, {" 1mbps ", 1_000_000},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "0", "0mbit", "-1mbit", "20furlongs", "mbit", "1e3", "0x10", "1..2mbit", "NaN", "2000gbit", "0.1bit"} {
		if r, err := Parse(in); err == nil || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, %v; want an ErrSyntax error", in, r, err)
		}
	}
}

// JSON and flags read a Rate with Parse and fail with its error text; JSON
// takes a bare number of bits per second too.
func TestRateReadsAsText(t *testing.T) {
	var v struct {
		Rate Rate `json:"rate"`
	}
	for in, want := range map[string]Rate{`{"rate":"20mbit"}`: 20 * Mbit, `{"rate":5000000}`: 5 * Mbit, `{"rate":"unlimited"}`: 0} {
		if err := json.Unmarshal([]byte(in), &v); err != nil || v.Rate != want {
			t.Errorf("%s: %v, %v", in, v.Rate, err)
		}
		out, err := json.Marshal(v)
		if err != nil || json.Unmarshal(out, &v) != nil || v.Rate != want {
			t.Errorf("%s: round trip through %s", in, out)
		}
	}
	_, want := Parse("20furlongs")
	jerr := json.Unmarshal([]byte(`{"rate":"20furlongs"}`), &v)
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var r Rate
	fs.TextVar(&r, "rate", Bit, "")
	ferr := fs.Parse([]string{"--rate", "20furlongs"})
	for _, err := range []error{jerr, ferr} {
		if err == nil || !strings.Contains(err.Error(), want.Error()) {
			t.Errorf("error %v, want one saying %q", err, want)
		}
	}
	if err := json.Unmarshal([]byte(`{"rate":true}`), &v); err == nil || !strings.Contains(err.Error(), "string or a number") {
		t.Errorf("a boolean rate: %v", err)
	}
}

// Parse reads outside input (flags, specs, the control API): it must never
// panic, and what it accepts must survive a round trip through String.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"20mbit", "5MB/s", "100kbit", "1500", "unlimited", "1.5Gb/s", "0", "-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		if r < 0 || r > Max {
			t.Fatalf("Parse(%q) = %d out of range", s, r)
		}
		back, err := Parse(r.String())
		if err != nil || back != r {
			t.Fatalf("round trip of %q: %v -> %q -> %v, %v", s, r, r.String(), back, err)
		}
	})
}
