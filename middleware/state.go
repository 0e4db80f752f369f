package middleware

import (
	"sync"
	"sync/atomic"
	"time"
)

// Status is the health state the status endpoint reports.
type Status int

const (
	// StatusUnknown: no check has reached a verdict yet.
	StatusUnknown Status = iota
	// StatusHealthy: the last check passed.
	StatusHealthy
	// StatusUnhealthy: FailureThreshold checks in a row failed.
	StatusUnhealthy
)

var statusNames = [...]string{StatusUnknown: "unknown", StatusHealthy: "healthy", StatusUnhealthy: "unhealthy"}

// String returns "unknown", "healthy" or "unhealthy".
func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return "Status(?)"
	}
	return statusNames[s]
}

// Snapshot is the monitor's state at one moment. Loop and probe results feed
// the same state.
type Snapshot struct {
	Status Status
	Mode   Mode
	// Last is the last recorded result; nil before the first.
	Last *Result
	// ConsecutiveFailures counts failed checks since the last pass.
	ConsecutiveFailures int
	// Since is when Status last changed; zero while it never has.
	Since time.Time

	// Healing describes the heal running now; nil when none is.
	Healing *HealStart
	// DueBy is when the loop owes its next result (in ModeAuto while
	// probes drive the checks: if they stop); zero while no loop runs
	// (ModeProbe, or Run not running).
	DueBy time.Time
	// Stale reports that the loop drives the checks but is more than a
	// Period past DueBy: whatever Status says, nothing has checked the
	// tunnel lately, so the status endpoint answers 503.
	Stale bool

	// ShortDeadlines counts the /check/ executions since the last
	// recorded result that failed at their callers' deadline, shorter
	// than the check timeout (Timeouts[0]), and so were not recorded;
	// ShortDeadline is the latest such deadline. Behind a probe whose
	// ?timeout= is under the check timeout, every failure is one: the
	// state would never turn unhealthy, and the status says so.
	ShortDeadlines int
	ShortDeadline  time.Duration
}

// stateStore holds the one state that loop and probe results feed, and wakes
// whoever waits for it to change.
type stateStore struct {
	threshold int
	observer  Observer

	mu      sync.Mutex
	snap    Snapshot
	changed chan struct{} // closed, then replaced, on every record and wake

	// version is bumped after every change of snap and of what the
	// monitor's Snapshot adds to it (touch): the status endpoint reads it
	// without a lock to tell that the answer it rendered is still the
	// state's.
	version atomic.Uint64
}

// touch records that the state, or what Snapshot adds to it, has changed.
func (s *stateStore) touch() { s.version.Add(1) }

func newStateStore(mode Mode, threshold int, observer Observer) *stateStore {
	return &stateStore{
		threshold: threshold,
		observer:  observer,
		snap:      Snapshot{Mode: mode},
		changed:   make(chan struct{}),
	}
}

// current returns the state and a channel that is closed at the next record.
func (s *stateStore) current() (Snapshot, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap, s.changed
}

// wake wakes whoever waits for the next record, without a record: what the
// snapshot adds around the state (the loop's DueBy) has changed.
func (s *stateStore) wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touch()
	close(s.changed)
	s.changed = make(chan struct{})
}

// noteShort counts a check not recorded because its callers' deadline,
// given, was shorter than the check timeout.
func (s *stateStore) noteShort(given time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snap.ShortDeadlines++
	s.snap.ShortDeadline = given
	s.touch()
}

// record applies r and returns the state after it.
func (s *stateStore) record(r Result) Snapshot {
	s.mu.Lock()
	before := s.snap
	after := before
	after.Last = &r
	after.ShortDeadlines, after.ShortDeadline = 0, 0
	if r.Passed() {
		after.ConsecutiveFailures = 0
		after.Status = StatusHealthy
	} else {
		after.ConsecutiveFailures++
		if after.ConsecutiveFailures >= s.threshold {
			after.Status = StatusUnhealthy
		}
	}
	if after.Status != before.Status {
		after.Since = r.Start.Add(r.Duration)
	}
	s.snap = after
	s.touch()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()

	if after.Status != before.Status {
		s.observer.StateChanged(before, after)
	}
	return after
}
