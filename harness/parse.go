package harness

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rate is a link rate in bits per second. Zero means unlimited: packets are
// not serialised, only delayed.
type Rate int64

// Limits on parsed values: beyond them a setting is a typo, not an experiment,
// and the arithmetic of the shaper stays far from overflow.
const (
	MaxRate         Rate = 1_000_000_000_000 // 1 Tbit/s
	MaxDelay             = time.Minute
	MaxQueueBytes        = 1 << 30
	MaxQueuePackets      = 1 << 20
)

// ErrSyntax is wrapped by every parser error.
var ErrSyntax = errors.New("invalid value")

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

// ParseRate parses a link rate: a plain number of bits per second, a number
// with a bit unit (bit, kbit, mbit, gbit; or bps, kbps, mbps, gbps as bits,
// case-insensitive), or a slash unit where b is a bit and B a byte (kb/s,
// Mb/s, KB/s, MB/s, MiB/s, ...). "unlimited" returns 0. Zero, negative and
// non-finite rates are errors.
func ParseRate(s string) (Rate, error) {
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
	v, err := parseNumber(num)
	if err != nil {
		return 0, fmt.Errorf("rate %q: %w", s, err)
	}
	bits := v * mult
	if bits < 1 {
		return 0, fmt.Errorf("rate %q: must be at least 1 bit/s (or \"unlimited\"): %w", s, ErrSyntax)
	}
	if bits > float64(MaxRate) {
		return 0, fmt.Errorf("rate %q: above %v: %w", s, MaxRate, ErrSyntax)
	}
	return Rate(math.Round(bits)), nil
}

// parseNumber accepts a plain non-negative decimal number: no sign, no
// exponent, no hex, no underscores, so that "1e3mbit" or "0x10" are not
// silently read as something else.
func parseNumber(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("missing number: %w", ErrSyntax)
	}
	dots := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case c == '.':
			dots++
		default:
			return 0, fmt.Errorf("unknown unit or bad number: %w", ErrSyntax)
		}
	}
	if dots > 1 || s == "." {
		return 0, fmt.Errorf("bad number: %w", ErrSyntax)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("bad number: %w", ErrSyntax)
	}
	return v, nil
}

// String formats r in the largest bit unit that represents it exactly, so
// that ParseRate(r.String()) == r.
func (r Rate) String() string {
	switch {
	case r == 0:
		return "unlimited"
	case r%1_000_000_000 == 0:
		return strconv.FormatInt(int64(r/1_000_000_000), 10) + "gbit"
	case r%1_000_000 == 0:
		return strconv.FormatInt(int64(r/1_000_000), 10) + "mbit"
	case r%1_000 == 0:
		return strconv.FormatInt(int64(r/1_000), 10) + "kbit"
	}
	return strconv.FormatInt(int64(r), 10) + "bit"
}

// QueueLimit is the tail-drop limit of one direction's FIFO, in bytes or in
// packets (at most one of the two is set). The zero value means
// DefaultQueueLimit.
type QueueLimit struct {
	Bytes   int
	Packets int
}

// DefaultQueueLimit is the limit used when a QueueLimit is zero: Linux's
// default txqueuelen.
var DefaultQueueLimit = QueueLimit{Packets: 1000}

// IsZero reports whether q is the zero value (the default limit).
func (q QueueLimit) IsZero() bool { return q.Bytes == 0 && q.Packets == 0 }

func (q QueueLimit) orDefault() QueueLimit {
	if q.IsZero() {
		return DefaultQueueLimit
	}
	return q
}

// String formats q as ParseQueue reads it: "300p" or "262144B".
func (q QueueLimit) String() string {
	q = q.orDefault()
	if q.Packets > 0 {
		return strconv.Itoa(q.Packets) + "p"
	}
	return strconv.Itoa(q.Bytes) + "B"
}

func (q QueueLimit) validate() error {
	switch {
	case q.Bytes < 0 || q.Packets < 0:
		return fmt.Errorf("queue: negative limit: %w", ErrSyntax)
	case q.Bytes > 0 && q.Packets > 0:
		return fmt.Errorf("queue: set bytes or packets, not both: %w", ErrSyntax)
	case q.Bytes > MaxQueueBytes || q.Packets > MaxQueuePackets:
		return fmt.Errorf("queue: limit too large: %w", ErrSyntax)
	}
	return nil
}

var queueUnits = []struct {
	suffix string
	bytes  int
}{
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"kB", 1e3}, {"B", 1},
}

// ParseQueue parses a queue limit: packets with a "p" suffix ("300p"), or
// bytes as a plain integer or with a unit: B, KB/kB (1000), MB, GB, KiB
// (1024), MiB, GiB ("256KB"). The limit must be positive.
func ParseQueue(s string) (QueueLimit, error) {
	in := strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(in, "p"); ok {
		v, err := parseNumber(n)
		if err != nil || v != math.Trunc(v) || v < 1 || v > MaxQueuePackets {
			return QueueLimit{}, fmt.Errorf("queue %q: packets must be a whole number in 1..%d: %w", s, MaxQueuePackets, ErrSyntax)
		}
		return QueueLimit{Packets: int(v)}, nil
	}
	num, mult := in, 1
	for _, u := range queueUnits {
		if strings.HasSuffix(in, u.suffix) {
			num, mult = in[:len(in)-len(u.suffix)], u.bytes
			break
		}
	}
	v, err := parseNumber(num)
	if err != nil {
		return QueueLimit{}, fmt.Errorf("queue %q: %w", s, err)
	}
	b := math.Round(v * float64(mult))
	if b < 1 || b > MaxQueueBytes {
		return QueueLimit{}, fmt.Errorf("queue %q: bytes must be in 1..%d: %w", s, MaxQueueBytes, ErrSyntax)
	}
	return QueueLimit{Bytes: int(b)}, nil
}

// ParseDelay parses a one-way delay as a Go duration ("20ms"); it must be in
// 0..MaxDelay.
func ParseDelay(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("delay %q: not a duration such as 20ms: %w", s, ErrSyntax)
	}
	if d < 0 || d > MaxDelay {
		return 0, fmt.Errorf("delay %q: must be in 0..%v: %w", s, MaxDelay, ErrSyntax)
	}
	return d, nil
}

// ParseLoss parses a loss probability: a fraction in 0..1 ("0.01") or a
// percentage ("1%").
func ParseLoss(s string) (float64, error) {
	in := strings.TrimSpace(s)
	scale := 1.0
	if n, ok := strings.CutSuffix(in, "%"); ok {
		in, scale = n, 100
	}
	v, err := parseNumber(in)
	if err != nil {
		return 0, fmt.Errorf("loss %q: %w", s, err)
	}
	v /= scale
	if v > 1 {
		return 0, fmt.Errorf("loss %q: must be in 0..1: %w", s, ErrSyntax)
	}
	return v, nil
}
