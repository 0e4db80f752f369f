package loadgen

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"

	"github.com/tunnelprobe/tunnelprobe/internal/enum"
)

// Direction says which way a run's payload flows.
type Direction int

const (
	// Up: the load generator writes, the sink discards. The default.
	Up Direction = iota
	// Down: the sink sends, the load generator reads.
	Down
	// Both: both at once on every connection.
	Both
)

var directionNames = []string{Up: "up", Down: "down", Both: "both"}

// String returns "up", "down" or "both".
func (d Direction) String() string { return enum.Name("Direction", directionNames, d) }

// MarshalText returns d.String(), so that a Direction is a flag.TextVar
// value and a JSON or YAML string.
func (d Direction) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses text with ParseDirection.
func (d *Direction) UnmarshalText(text []byte) error {
	v, err := ParseDirection(string(text))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// ParseDirection parses "up", "down" or "both" (any case).
func ParseDirection(s string) (Direction, error) {
	return enum.Parse[Direction]("direction", directionNames, s)
}

// Defaults for the zero values of Config's fields.
const (
	DefaultDuration     = 30 * time.Second
	DefaultProbeEvery   = time.Second
	DefaultProbeTimeout = 10 * time.Second
	DefaultDialTimeout  = 10 * time.Second
	DefaultPathName     = "direct"
	// MaxDialsInFlight bounds the dials in progress at any moment,
	// during the ramp and for reconnects alike.
	MaxDialsInFlight = 256
)

// Config describes one load run. The zero value of every field but Target
// and Conns is useful; see each field.
type Config struct {
	// Target is the host:port of a sink that speaks the protocol of
	// package [github.com/tunnelprobe/tunnelprobe/loadgen/sink].
	Target string
	// Dialer opens the connections; nil means the host network, from
	// Sources when set.
	Dialer check.Dialer
	// Sources are source addresses for host-network dials, used round
	// robin: each multiplies the ephemeral ports available towards one
	// target. They are bound with IP_BIND_ADDRESS_NO_PORT, so the port is
	// chosen at connect(). Only with a nil Dialer.
	Sources []netip.Addr
	// PathName names the path in Result.Path; empty means "direct".
	PathName string

	// Conns is the number of connections to hold open; it must be > 0.
	Conns int
	// ConnectRate is the number of new connections per second during the
	// ramp. With ConnectRate and Ramp both 0, connections are opened as
	// fast as possible, MaxDialsInFlight dials at a time.
	ConnectRate float64
	// Ramp, an alternative to ConnectRate, spreads the Conns first dials
	// evenly over Ramp.
	Ramp time.Duration
	// Duration is how long to hold the connections after the ramp; 0
	// means DefaultDuration.
	Duration time.Duration
	// DialTimeout bounds each dial; 0 means DefaultDialTimeout.
	DialTimeout time.Duration

	// Rate is the aggregate payload rate in bits per second across all
	// connections, each carrying Rate/Conns; in Both, each direction
	// carries Rate, as a link's rate is per direction. 0 means greedy:
	// every connection writes (or the sink sends) as fast as the path
	// allows.
	Rate rate.Rate
	// Direction is the way the payload flows; the zero value is Up.
	Direction Direction
	// NoReconnect leaves broken connections and failed dials alone. By
	// default they are redialled with exponential back-off (50 ms
	// doubling to 2 s, with jitter); every break counts as a disruption.
	NoReconnect bool

	// Probe, when set, runs every ProbeEvery during the whole run, over
	// the path under load (build it with the same Dialer). Ticks keep
	// their schedule; a tick that comes while the previous probe still
	// runs is skipped and not counted, so probes never overlap and a slow
	// one shows as its own latency. Successful probes are timed into the
	// probe histogram; failures (errors, ProbeTimeout, panics) are
	// counted in ProbeFailures, not timed.
	Probe check.Checker
	// ProbeEvery is the probe period; 0 means DefaultProbeEvery.
	ProbeEvery time.Duration
	// ProbeTimeout bounds each probe; 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration

	// OnSecond, when set, is called with every whole second of the series
	// as soon as it ends, from one goroutine, for a live progress line. It
	// must return quickly. The run's partial last second is only in
	// Result.Series.
	OnSecond func(Second)
	// OnWindowStart and OnWindowEnd, when set, are called from Run's
	// goroutine once the measured window (Result.Start and
	// DurationSeconds) has started, before the first dial, and as it ends
	// (the hold is over, or ctx ended), before the connections' end-of-run
	// handshake and before the end is read off the clock: the instants to
	// read a count the far side keeps (what it received), so that the
	// difference falls within the window. What the send buffers still hold
	// at its end drains through the path in the handshake, after it. Each
	// must return quickly.
	OnWindowStart, OnWindowEnd func()
}

// Validate reports every invalid field of c; each error names its field.
// Run calls it first.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("loadgen: "+format, args...))
	}
	if c.Target == "" {
		bad("Target must be set (host:port of a sink)")
	} else if _, _, err := net.SplitHostPort(c.Target); err != nil {
		bad("Target %q must be host:port: %v", c.Target, err)
	}
	if c.Dialer != nil && len(c.Sources) > 0 {
		bad("Sources apply to host-network dials only; they cannot be combined with Dialer")
	}
	for i, a := range c.Sources {
		if !a.IsValid() {
			bad("Sources[%d] is not a valid address", i)
		}
	}
	if c.Conns <= 0 {
		bad("Conns must be > 0 (got %d)", c.Conns)
	}
	if !finiteNonNeg(c.ConnectRate) {
		bad("ConnectRate must be >= 0 (got %v)", c.ConnectRate)
	}
	if c.Ramp < 0 {
		bad("Ramp must be >= 0 (got %v)", c.Ramp)
	}
	if c.ConnectRate > 0 && c.Ramp > 0 {
		bad("ConnectRate and Ramp are alternatives: set one of them")
	}
	if c.Duration < 0 {
		bad("Duration must be >= 0 (got %v)", c.Duration)
	}
	if c.DialTimeout < 0 {
		bad("DialTimeout must be >= 0 (got %v)", c.DialTimeout)
	}
	if c.Rate < 0 {
		bad("Rate must be >= 0 (got %v)", c.Rate)
	}
	if c.Direction < Up || c.Direction > Both {
		bad("Direction %v is not Up, Down or Both", c.Direction)
	}
	if c.ProbeEvery < 0 {
		bad("ProbeEvery must be >= 0 (got %v)", c.ProbeEvery)
	}
	if c.ProbeTimeout < 0 {
		bad("ProbeTimeout must be >= 0 (got %v)", c.ProbeTimeout)
	}
	return errors.Join(errs...)
}

func finiteNonNeg(f float64) bool { return f >= 0 && !math.IsInf(f, 0) }

// withDefaults returns c with its zero values replaced by the defaults.
func (c Config) withDefaults() Config {
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.ProbeEvery == 0 {
		c.ProbeEvery = DefaultProbeEvery
	}
	if c.ProbeTimeout == 0 {
		c.ProbeTimeout = DefaultProbeTimeout
	}
	if c.PathName == "" {
		c.PathName = DefaultPathName
	}
	return c
}

// dialInterval returns the spacing of the ramp's first dials (0: no
// spacing).
func (c Config) dialInterval() time.Duration {
	switch {
	case c.ConnectRate > 0:
		return time.Duration(float64(time.Second) / c.ConnectRate)
	case c.Ramp > 0:
		return c.Ramp / time.Duration(c.Conns)
	}
	return 0
}

// connBytesPerSecond returns each connection's payload rate in bytes per
// second, 0 when greedy.
func (c Config) connBytesPerSecond() float64 {
	return float64(c.Rate) / 8 / float64(c.Conns)
}
