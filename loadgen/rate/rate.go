package rate

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/internal/textnum"
)

// Rate is a rate in bits per second. What zero means is the user's to say:
// an unlimited link, a greedy load.
type Rate int64

// Units for rates written in Go: 20 * rate.Mbit.
const (
	Bit  Rate = 1
	Kbit      = 1_000 * Bit
	Mbit      = 1_000 * Kbit
	Gbit      = 1_000 * Mbit
)

// Max is the largest rate Parse accepts: beyond it a rate is a typo, not an
// experiment, and a shaper's arithmetic stays far from overflow.
const Max = 1_000 * Gbit // 1 Tbit/s

// ErrSyntax is wrapped by every error of Parse (the same value as
// harness.ErrSyntax).
var ErrSyntax = textnum.ErrSyntax

var (
	_ encoding.TextUnmarshaler = (*Rate)(nil)
	_ json.Unmarshaler         = (*Rate)(nil)
	_ encoding.TextMarshaler   = Rate(0)
)

type unit struct {
	suffix string
	bits   float64 // bits per second for one of the unit
}

// Bit units are matched case-insensitively ("20mbit", "20Mbit"); the slash
// forms follow SI: a small b is a bit, a capital B a byte ("5MB/s").
var (
	bitUnits = []unit{
		{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1},
		{"gbps", 1e9}, {"mbps", 1e6}, {"kbps", 1e3}, {"bps", 1},
	}
	slashUnits = []unit{
		{"GiB/s", 8 << 30}, {"MiB/s", 8 << 20}, {"KiB/s", 8 << 10},
		{"GB/s", 8e9}, {"MB/s", 8e6}, {"KB/s", 8e3}, {"kB/s", 8e3}, {"B/s", 8},
		{"Gb/s", 1e9}, {"Mb/s", 1e6}, {"kb/s", 1e3}, {"Kb/s", 1e3}, {"b/s", 1},
	}
)

// Parse parses a rate: a plain number of bits per second, a number with a
// bit unit (bit, kbit, mbit, gbit; or bps, kbps, mbps, gbps as bits,
// case-insensitive), or a slash unit where b is a bit and B a byte (kb/s,
// Mb/s, KB/s, MB/s, MiB/s, ...). "unlimited" returns 0. Zero, negative,
// non-finite rates and rates above Max are errors.
func Parse(s string) (Rate, error) {
	in := strings.TrimSpace(s)
	if strings.EqualFold(in, "unlimited") {
		return 0, nil
	}
	num, mult := in, 1.0
	found := false
	for _, u := range slashUnits {
		if strings.HasSuffix(in, u.suffix) {
			num, mult, found = in[:len(in)-len(u.suffix)], u.bits, true
			break
		}
	}
	if !found {
		low := strings.ToLower(in)
		for _, u := range bitUnits {
			if strings.HasSuffix(low, u.suffix) {
				num, mult = in[:len(in)-len(u.suffix)], u.bits
				break
			}
		}
	}
	v, err := textnum.Decimal(num)
	if err != nil {
		return 0, fmt.Errorf("rate %q: %w", s, err)
	}
	bits := v * mult
	if bits < 1 {
		return 0, fmt.Errorf("rate %q: must be at least 1 bit/s (or \"unlimited\"): %w", s, ErrSyntax)
	}
	if bits > float64(Max) {
		return 0, fmt.Errorf("rate %q: above %v: %w", s, Max, ErrSyntax)
	}
	return Rate(math.Round(bits)), nil
}

// String formats r in the largest bit unit that represents it exactly, so
// that Parse(r.String()) == r.
func (r Rate) String() string {
	switch {
	case r == 0:
		return "unlimited"
	case r%Gbit == 0:
		return strconv.FormatInt(int64(r/Gbit), 10) + "gbit"
	case r%Mbit == 0:
		return strconv.FormatInt(int64(r/Mbit), 10) + "mbit"
	case r%Kbit == 0:
		return strconv.FormatInt(int64(r/Kbit), 10) + "kbit"
	}
	return strconv.FormatInt(int64(r), 10) + "bit"
}

// MarshalText returns r.String(), so that a Rate is a flag.TextVar value
// and a JSON or YAML string.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses text with Parse.
func (r *Rate) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// UnmarshalJSON reads a string for Parse or a number of bits per second.
func (r *Rate) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // left as it was, as encoding/json does with null
	}
	s, err := textnum.JSONText(b)
	if err != nil {
		return err
	}
	return r.UnmarshalText([]byte(s))
}
