package harness

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/textnum"
	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
)

// Rate is a link rate in bits per second. Zero means unlimited: packets are
// not serialised, only delayed. It is the one rate type of the project,
// shared with the load generator.
type Rate = rate.Rate

// Limits on parsed values: beyond them a setting is a typo, not an experiment,
// and the arithmetic of the shaper stays far from overflow.
const (
	MaxRate         = rate.Max // 1 Tbit/s
	MaxDelay        = time.Minute
	MaxQueueBytes   = 1 << 30
	MaxQueuePackets = 1 << 20
)

// ErrSyntax is wrapped by every parser error, rate.Parse's included.
var ErrSyntax = textnum.ErrSyntax

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
		v, err := textnum.Decimal(n)
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
	v, err := textnum.Decimal(num)
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
	v, err := textnum.Decimal(in)
	if err != nil {
		return 0, fmt.Errorf("loss %q: %w", s, err)
	}
	v /= scale
	if v > 1 {
		return 0, fmt.Errorf("loss %q: must be in 0..1: %w", s, ErrSyntax)
	}
	return v, nil
}

// ParseMTU parses a link MTU (Settings.MTU): a whole number of bytes in
// MinMTU..MaxMTU, or 0 or "unlimited" for no limit.
func ParseMTU(s string) (int, error) {
	in := strings.TrimSpace(s)
	if in == "unlimited" {
		return 0, nil
	}
	n, err := strconv.Atoi(in)
	if err != nil || n != 0 && (n < MinMTU || n > MaxMTU) {
		return 0, fmt.Errorf("mtu %q: want bytes in %d..%d, or 0 or \"unlimited\" for no limit: %w", s, MinMTU, MaxMTU, ErrSyntax)
	}
	return n, nil
}

// FormatMTU formats a link MTU as ParseMTU reads it: "1400", or
// "unlimited" for 0.
func FormatMTU(mtu int) string {
	if mtu == 0 {
		return "unlimited"
	}
	return strconv.Itoa(mtu)
}
