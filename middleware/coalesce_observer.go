package middleware

import "time"

// CheckJoin describes a /check/ caller that joined a check already running
// for other callers instead of starting its own: one coalesced request.
type CheckJoin struct {
	Time time.Time
	// Callers counts the callers sharing the check once this one joined,
	// this one included (so at least 2).
	Callers int
}

// A CoalesceObserver is told each time a /check/ caller (or a
// [Monitor.Probe] call) joins a check that is already running. It is
// optional: when the [Observer] in Config also implements
// CoalesceObserver, the monitor calls CheckJoined, synchronously from the
// caller's goroutine, so it must be quick and safe for concurrent use. The
// caller that starts a check is reported by [Observer.CheckStarted] only, so
// requests = checks started by probes + joins. A result served again under
// MinCheckInterval is neither. [ObserverFuncs].OnCheckJoined adapts a
// function.
type CoalesceObserver interface {
	CheckJoined(CheckJoin)
}

// noteJoined tells the observer, if it cares, that a caller joined a running
// check shared by callers callers. Called without the flight lock held.
func (m *Monitor) noteJoined(callers int) {
	if o, ok := m.cfg.Observer.(CoalesceObserver); ok {
		o.CheckJoined(CheckJoin{Time: m.cfg.Clock.Now(), Callers: callers})
	}
}
