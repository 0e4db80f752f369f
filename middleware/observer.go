package middleware

import "time"

// Source tells who asked for a check.
type Source int

const (
	// SourceLoop: the health loop.
	SourceLoop Source = iota
	// SourceProbe: a /check/ request.
	SourceProbe
	// SourceFull: the full check that runs while the light probes pass
	// (Evidence.FullCheckPeriod). Its result is not recorded in the state:
	// it decides the checks that follow.
	SourceFull
)

// String returns "loop", "probe" or "full".
func (s Source) String() string {
	switch s {
	case SourceProbe:
		return "probe"
	case SourceFull:
		return "full"
	}
	return "loop"
}

// CheckStart describes a check that is about to run.
type CheckStart struct {
	Source Source
	Time   time.Time
	// Timeout is the loop's timeout for this try; for a probe, the time
	// left until MaxCheckTimeout ends it whatever its callers ask.
	Timeout time.Duration
}

// Result is the outcome of one executed check.
type Result struct {
	Source   Source
	Start    time.Time
	Duration time.Duration
	// Err is nil for a pass.
	Err error
	// TimedOut marks a check that was still running when a deadline ended
	// it: the loop's timeout, MaxCheckTimeout or its callers' deadline.
	// Duration is then how long the tunnel was given.
	TimedOut bool
	// Abandoned marks a probe check that says nothing about the tunnel and
	// is not recorded in the state: every caller left, or their deadline
	// cut it off before it had run for the monitor's check timeout (see
	// [Monitor.Probe]).
	Abandoned bool
	// Evidence, when not empty, says what decided the result without an
	// active check (Config.Evidence): the light probe's answer, its
	// silence, or the counters' sending into silence.
	Evidence string
	// Via is the interface the check went through (Config.Via), or "".
	Via string
	// Proof names the proof that decided the result without an active
	// check (ProofLightProbe...), with Evidence; "" when a check ran.
	Proof string
	// SilentProbes, for a result that passed on another proof (delivery,
	// an active check), are the light probes' targets when every one was
	// silent: the tunnel works, and they prove nothing now.
	SilentProbes []string
}

// Passed reports whether the check passed.
func (r Result) Passed() bool { return r.Err == nil }

// DecidedBy returns what decided the result: the proof that did without
// an active check (Result.Proof: "light-probe", "delivery", "counters",
// "full-check"), or "active" for one a check ran for.
func (r Result) DecidedBy() string {
	if r.Proof != "" {
		return r.Proof
	}
	return "active"
}

// The proofs that decide a check without an active check (Result.Proof,
// Result.DecidedBy).
const (
	// ProofLightProbe: the light probe's answer, or its silence, loss or
	// path MTU black hole.
	ProofLightProbe = "light-probe"
	// ProofDelivery: data of the tunnel's users that the far end
	// acknowledged (Evidence.Delivery).
	ProofDelivery = "delivery"
	// ProofCounters: the tunnel's counters, sending into silence.
	ProofCounters = "counters"
	// ProofFullCheck: the active check, failing while the probes pass
	// (Evidence.FullCheckPeriod).
	ProofFullCheck = "full-check"
)

// HealStart describes a heal that is about to run.
type HealStart struct {
	Time time.Time
	// Attempt counts heals since the state was last healthy, from 1.
	Attempt int
	// Timeout is when the heal's context ends (Config.HealTimeout).
	Timeout time.Duration
}

// HealEvent describes one call of the heal function.
type HealEvent struct {
	Time time.Time
	// Attempt counts heals since the state was last healthy, from 1.
	Attempt  int
	Duration time.Duration
	// Err is the heal's error; it wraps ErrHealTimeout when the heal was
	// still running at Config.HealTimeout.
	Err error
}

// An Observer is told what the monitor does: for logs and metrics. Its
// methods are called synchronously from the goroutine doing the work, so they
// must be quick and safe for concurrent use.
type Observer interface {
	CheckStarted(CheckStart)
	CheckFinished(Result)
	StateChanged(from, to Snapshot)
	HealStarted(HealStart)
	Healed(HealEvent)
}

// ObserverFuncs adapts functions to an [Observer]; nil fields are skipped.
type ObserverFuncs struct {
	OnCheckStarted  func(CheckStart)
	OnCheckFinished func(Result)
	OnStateChanged  func(from, to Snapshot)
	OnHealStarted   func(HealStart)
	OnHealed        func(HealEvent)
	// OnCheckJoined and OnLightProbe make ObserverFuncs a
	// CoalesceObserver and a LightProbeObserver.
	OnCheckJoined func(CheckJoin)
	OnLightProbe  func(LightProbeResult)
}

var (
	_ Observer           = ObserverFuncs{}
	_ CoalesceObserver   = ObserverFuncs{}
	_ LightProbeObserver = ObserverFuncs{}
)

// CheckStarted calls OnCheckStarted if set.
func (o ObserverFuncs) CheckStarted(s CheckStart) {
	if o.OnCheckStarted != nil {
		o.OnCheckStarted(s)
	}
}

// CheckFinished calls OnCheckFinished if set.
func (o ObserverFuncs) CheckFinished(r Result) {
	if o.OnCheckFinished != nil {
		o.OnCheckFinished(r)
	}
}

// StateChanged calls OnStateChanged if set.
func (o ObserverFuncs) StateChanged(from, to Snapshot) {
	if o.OnStateChanged != nil {
		o.OnStateChanged(from, to)
	}
}

// HealStarted calls OnHealStarted if set.
func (o ObserverFuncs) HealStarted(s HealStart) {
	if o.OnHealStarted != nil {
		o.OnHealStarted(s)
	}
}

// Healed calls OnHealed if set.
func (o ObserverFuncs) Healed(e HealEvent) {
	if o.OnHealed != nil {
		o.OnHealed(e)
	}
}

// CheckJoined calls OnCheckJoined if set.
func (o ObserverFuncs) CheckJoined(j CheckJoin) {
	if o.OnCheckJoined != nil {
		o.OnCheckJoined(j)
	}
}

// LightProbeFinished calls OnLightProbe if set.
func (o ObserverFuncs) LightProbeFinished(r LightProbeResult) {
	if o.OnLightProbe != nil {
		o.OnLightProbe(r)
	}
}
