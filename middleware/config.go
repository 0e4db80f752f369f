package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/internal/enum"
)

// Mode decides who drives the checks.
type Mode int

const (
	// ModeLoop: the health loop drives the checks and heals; /check/ still
	// runs checks on demand. The safe choice for plain Docker.
	ModeLoop Mode = iota
	// ModeProbe: no loop and no auto-heal; the state comes from /check/
	// calls made by an orchestrator's probe.
	ModeProbe
	// ModeAuto: the loop stands down while /check/ calls record a result at
	// least once per period and takes over again after two periods without
	// one; a call whose check was abandoned or cut short (see
	// Monitor.Probe) drives nothing. The heal stays the loop's, on the state
	// whoever drove recorded.
	ModeAuto
)

var modeNames = []string{ModeLoop: "loop", ModeProbe: "probe", ModeAuto: "auto"}

// String returns "loop", "probe" or "auto".
func (m Mode) String() string { return enum.Name("Mode", modeNames, m) }

// MarshalText returns m.String(), so that a Mode reads and writes as text
// in flags, JSON and YAML.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses "loop", "probe" or "auto", in any case.
func (m *Mode) UnmarshalText(text []byte) error {
	v, err := enum.Parse[Mode]("mode", modeNames, string(text))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// A HealFunc repairs the tunnel, typically by restarting the VPN. It runs
// beside the loop's checks, which go on while it does; an error is reported
// to the observer. It must return soon after ctx ends (Config.HealTimeout):
// until it returns no other heal starts, and Run waits for it to return.
type HealFunc func(ctx context.Context) error

// ErrHealTimeout is wrapped by the error of a heal still running at
// Config.HealTimeout.
var ErrHealTimeout = errors.New("heal timed out")

// HealBackoff spaces heals while the state stays unhealthy: the first heal
// comes once the state has been unhealthy for Initial, and each further one
// Step later than the gap before it (Initial, Initial+Step, Initial+2*Step,
// ...). A passing check resets it.
type HealBackoff struct {
	Initial time.Duration
	Step    time.Duration
}

// The reference health loop's ladder and heal backoff: what a Ladder reads
// as "reference" and what a zero HealBackoff means (package
// middleware/preset exports them as ReferenceTimeouts and
// ReferenceHealBackoff).
var (
	referenceTimeouts    = []time.Duration{2 * time.Second, 4 * time.Second, 6 * time.Second, 8 * time.Second, 10 * time.Second}
	referenceHealBackoff = HealBackoff{Initial: 6 * time.Second, Step: 5 * time.Second}
)

// Defaults used for zero fields of [Config].
const (
	DefaultPeriod          = 5 * time.Second
	DefaultTimeout         = 10 * time.Second
	DefaultRetryWait       = time.Second
	DefaultMaxWait         = 60 * time.Second
	DefaultMaxCheckTimeout = 60 * time.Second
	DefaultHealTimeout     = time.Minute
)

// Config configures a [Monitor]. The zero value is useful: loop mode, a fixed
// 10 s timeout, a 5 s period, unhealthy after one failure, no heal.
type Config struct {
	// Mode decides who drives the checks; the zero value is ModeLoop.
	Mode Mode

	// Period is the loop's wait after a passing check, and in ModeAuto the
	// rhythm in which /check/ calls must record results for the loop to
	// stand down.
	// Zero means DefaultPeriod.
	Period time.Duration

	// Timeouts bounds each check the loop runs. One entry is a fixed
	// timeout; several are a ladder: the n-th consecutive failure is
	// followed by a try with Timeouts[n] (the last entry repeats), and a
	// pass or a heal goes back to Timeouts[0]. Empty means DefaultTimeout.
	//
	// Timeouts[0] is also the least time a /check/ must have run before its
	// callers' deadline cuts it off for that to count as the tunnel's
	// failure (see [Monitor.Probe]): in ModeProbe set it to the probe's
	// own timeout.
	Timeouts Ladder

	// RetryWait is the least time between the starts of two loop checks
	// after a failure, so a check that fails at once does not spin. The
	// reference retries at once; its checks take seconds, so this only
	// matters for instant failures. Zero means DefaultRetryWait.
	RetryWait time.Duration

	// FailureThreshold is how many consecutive failures turn the state
	// unhealthy. Zero means 1, as in the reference.
	FailureThreshold int

	// Heal, when set, is called by the loop while the state is unhealthy,
	// spaced by HealBackoff (from the end of the previous heal), one at a
	// time. The loop keeps checking while it runs, and starts the timeout
	// ladder over when it ends. Never called in ModeProbe, nor in ModeAuto
	// while probes drive the checks.
	Heal HealFunc

	// HealBackoff spaces heals. The zero value heals after 6 s unhealthy,
	// then 11 s, 16 s, ..., as the reference health loop did.
	HealBackoff HealBackoff

	// HealTimeout bounds each heal: its context ends then, and the heal is
	// reported as failed with ErrHealTimeout. The loop goes on checking
	// while a heal runs, so this bounds how long a stuck restart blocks the
	// next one, not how stale the state may get. A VPN restart takes
	// seconds; a container's restart up to its grace period (30 s by
	// default in Kubernetes) and its start; so a minute is stuck. Zero
	// means DefaultHealTimeout.
	HealTimeout time.Duration

	// MaxWait caps the status endpoint's ?wait=. Zero means DefaultMaxWait.
	MaxWait time.Duration

	// MaxCheckTimeout caps how long one /check/ execution may run, whatever
	// its callers ask with ?timeout=. Zero means DefaultMaxCheckTimeout.
	MaxCheckTimeout time.Duration

	// MinCheckInterval, when positive, makes /check/ serve the last result
	// again while it is younger than this instead of running the check, so
	// a flood of probes cannot hammer the target.
	MinCheckInterval time.Duration

	// Evidence, when set, lets proof of life decide checks before the
	// checker runs: an answer to the monitor's own light probe passes one,
	// a window of probes unanswered or of sending into silence fails one
	// (see [Evidence]). Its probes are sent, and its counters sampled,
	// while Run runs, in every mode.
	Evidence *Evidence

	// Tiers, when set, replace the loop's periodic check with a tiered
	// schedule (see [Tier]; the upstream preset is one): startup tiers once, then
	// each periodic tier when due, one at a time; a run that fails is
	// recorded, and with Heal set starts a heal at once; the schedule
	// starts over when the heal ends. Only in ModeLoop. Period, Timeouts and HealBackoff then do not
	// shape the loop (Timeouts[0] still applies to /check/); RetryWait
	// still spaces the runs after a failure.
	Tiers []Tier

	// HideErrors keeps error text out of HTTP responses; observers still
	// get it.
	HideErrors bool

	// Via names the network interface the checks and the light probe go
	// through (a tunnel's wg0), for the answers and the logs: each
	// Result's Via. Only a name: give the checker and the probe a
	// check.BoundDialer(Via) for it to be so. Empty: none is named.
	Via string

	// Observer is told about checks, state changes and heals. Nil means
	// none.
	Observer Observer

	// Clock is the time source; nil means the real clock. Tests pass a
	// clockwork.FakeClock.
	Clock clockwork.Clock
}

// Validate returns an error naming every field of c that is out of range,
// the error New returns for c (without New's prefix); nil when New would
// accept c. It needs no checker, so a configuration read from a file can be
// checked before anything is built.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults returns c with zero fields replaced by their defaults, or an
// error naming each field that is out of range. It is New's validation and
// Validate's.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Mode < ModeLoop || c.Mode > ModeAuto {
		errs = append(errs, fmt.Errorf("%s: %v is not loop, probe or auto", "Mode", c.Mode))
	}
	positive := func(name string, d *time.Duration, def time.Duration) {
		switch {
		case *d < 0:
			errs = append(errs, fmt.Errorf("%s: %v is negative", name, *d))
		case *d == 0:
			*d = def
		}
	}
	positive("Period", &c.Period, DefaultPeriod)
	positive("RetryWait", &c.RetryWait, DefaultRetryWait)
	positive("MaxWait", &c.MaxWait, DefaultMaxWait)
	positive("MaxCheckTimeout", &c.MaxCheckTimeout, DefaultMaxCheckTimeout)
	positive("HealTimeout", &c.HealTimeout, DefaultHealTimeout)
	if c.MinCheckInterval < 0 {
		errs = append(errs, fmt.Errorf("MinCheckInterval: %v is negative", c.MinCheckInterval))
	}
	if len(c.Timeouts) == 0 {
		c.Timeouts = []time.Duration{DefaultTimeout}
	}
	for i, d := range c.Timeouts {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s[%d]: %v is not positive", "Timeouts", i, d))
		}
	}
	switch {
	case c.FailureThreshold < 0:
		errs = append(errs, fmt.Errorf("FailureThreshold: %d is negative", c.FailureThreshold))
	case c.FailureThreshold == 0:
		c.FailureThreshold = 1
	}
	if c.HealBackoff == (HealBackoff{}) {
		c.HealBackoff = referenceHealBackoff
	}
	if c.HealBackoff.Initial < 0 || c.HealBackoff.Step < 0 {
		errs = append(errs, fmt.Errorf("HealBackoff: %+v has a negative field", c.HealBackoff))
	}
	var err error
	c.Tiers, err = checkTiers(c.Tiers, c.Mode)
	errs = append(errs, err)
	if c.Evidence != nil {
		e, err := c.Evidence.withDefaults()
		errs = append(errs, err)
		c.Evidence = &e
	}
	if c.Observer == nil {
		c.Observer = ObserverFuncs{}
	}
	if c.Clock == nil {
		c.Clock = clockwork.NewRealClock()
	}
	return c, errors.Join(errs...)
}

// timeoutFor returns the loop's timeout after failures consecutive failures.
func (c *Config) timeoutFor(failures int) time.Duration {
	return c.Timeouts[min(failures, len(c.Timeouts)-1)]
}
