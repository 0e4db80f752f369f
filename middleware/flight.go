package middleware

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// flightGroup shares one /check/ execution among concurrent callers.
// x/sync/singleflight shares work too, but it cannot cancel the work once
// every caller has left, and that is the point here: a probe that gives up
// must not leave a dial or handshake running behind it.
type flightGroup struct {
	mu      sync.Mutex
	current *flight
	// joined, when set (tests), is called after a caller joined a flight.
	joined func()
}

type flight struct {
	done    chan struct{} // closed once result is set
	result  Result
	cancel  context.CancelFunc
	started time.Time // when the first caller asked for it

	// Guarded by flightGroup.mu.
	waiters int
	// Why the last caller left, set before cancel: left is set, deadline
	// tells whether it was the caller's deadline, and budget is how long
	// that deadline gave the check from the caller's arrival.
	left, deadline bool
	budget         time.Duration

	// recording orders the records of one execution: a caller whose
	// deadline ended it for them records its failure while the check goes
	// on for others, and the check's own verdict follows. Guarded by it:
	// segment, when the part of the execution still unrecorded began, and
	// finished, set once the check has returned.
	recording sync.Mutex
	segment   time.Time
	finished  bool
}

// shareCheck joins the running /check/ execution, or starts one, and waits
// for its result or for ctx to end.
func (m *Monitor) shareCheck(ctx context.Context) Result {
	joinedAt := m.cfg.Clock.Now()
	f := m.join()
	select {
	case <-f.done:
		m.leave(f, nil, 0)
		return f.result
	case <-ctx.Done():
	}
	var budget time.Duration
	if deadline, ok := ctx.Deadline(); ok {
		budget = deadline.Sub(joinedAt)
	}
	if m.leave(f, ctx.Err(), budget) {
		// This caller was the last: it cancelled the check and waits for it
		// to return, so that nothing the check started outlives its callers.
		<-f.done
		return f.result
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return m.leaveAtDeadline(f, budget, ctx.Err())
	}
	return Result{
		Source:    SourceProbe,
		Start:     joinedAt,
		Duration:  m.cfg.Clock.Since(joinedAt),
		Err:       fmt.Errorf("gave up waiting for the check: %w", ctx.Err()),
		Abandoned: true,
	}
}

// leaveAtDeadline answers a caller whose deadline ended while others still
// wait for check f, with what it would be told alone: a failure, recorded
// when the check had run for long enough to say something about the
// tunnel. The check goes on for the others; from the observer's view the
// execution ended here and a new one, the rest of it, starts.
func (m *Monitor) leaveAtDeadline(f *flight, budget time.Duration, cause error) Result {
	st := m.probeStop(true, true, max(budget, m.cfg.Clock.Since(f.started)))
	if !st.record {
		m.state.noteShort(st.given)
		return Result{Source: SourceProbe, Start: f.started, Duration: m.cfg.Clock.Since(f.started),
			Err: fmt.Errorf("%w: %w", st.reason, cause), TimedOut: true, Abandoned: true}
	}
	f.recording.Lock()
	if f.finished {
		// The check's verdict is being recorded: take it.
		f.recording.Unlock()
		<-f.done
		return f.result
	}
	now := m.cfg.Clock.Now()
	r := Result{Source: SourceProbe, Start: f.segment, Duration: now.Sub(f.segment), TimedOut: true,
		Err: fmt.Errorf("%w: the check had not finished: %w", st.reason, cause)}
	f.segment = now
	m.finish(r)
	m.cfg.Observer.CheckStarted(CheckStart{Source: SourceProbe, Time: now, Timeout: m.cfg.MaxCheckTimeout - now.Sub(f.started)})
	f.recording.Unlock()
	return r
}

func (m *Monitor) join() *flight {
	g := &m.flights
	g.mu.Lock()
	f := g.current
	joinedRunning := f != nil
	if f == nil {
		ctx, cancel := context.WithCancel(context.Background())
		f = &flight{done: make(chan struct{}), cancel: cancel, started: m.cfg.Clock.Now()}
		g.current = f
		// Owned by the flight's callers: the last one to leave cancels it
		// and waits on done.
		go m.fly(ctx, f)
	}
	f.waiters++
	callers := f.waiters
	g.mu.Unlock()
	if joinedRunning {
		m.noteJoined(callers) // see coalesce_observer.go
	}
	if g.joined != nil {
		g.joined()
	}
	return f
}

// leave drops one caller of f; reason is nil when the caller has the result,
// else why it left, and budget the time its deadline gave the check. It
// reports whether the caller must wait for f's result: the check has ended
// already, or this caller was the last and cancelled it.
func (m *Monitor) leave(f *flight, reason error, budget time.Duration) (waitResult bool) {
	g := &m.flights
	g.mu.Lock()
	defer g.mu.Unlock()
	f.waiters--
	if reason == nil {
		return false
	}
	select {
	case <-f.done:
		return true
	default:
	}
	if f.waiters > 0 {
		return false
	}
	if g.current == f {
		// The next caller starts afresh rather than joining a cancelled check.
		g.current = nil
	}
	f.left = true
	f.deadline = errors.Is(reason, context.DeadlineExceeded)
	f.budget = budget
	f.cancel()
	return true
}

// fly runs one shared check; ctx ends when its last caller leaves.
func (m *Monitor) fly(ctx context.Context, f *flight) {
	defer f.cancel()
	limit := m.cfg.MaxCheckTimeout
	ctx, cancel := clockwork.WithTimeout(ctx, m.cfg.Clock, limit)
	defer cancel()
	f.recording.Lock()
	f.segment = m.begin(SourceProbe, limit)
	f.recording.Unlock()
	r := m.decide(ctx, f.segment, SourceProbe, m.checker, func() stop {
		m.flights.mu.Lock()
		left, deadline, budget := f.left, f.deadline, f.budget
		m.flights.mu.Unlock()
		return m.probeStop(left, deadline, max(budget, m.cfg.Clock.Since(f.started)))
	})
	m.flights.mu.Lock()
	if m.flights.current == f {
		m.flights.current = nil
	}
	m.flights.mu.Unlock()
	f.recording.Lock()
	f.finished = true
	if !r.Start.Equal(f.segment) {
		// A caller's deadline recorded the first part of this execution.
		r.Start, r.Duration = f.segment, m.cfg.Clock.Since(f.segment)
	}
	m.finish(r)
	f.recording.Unlock()
	f.result = r
	close(f.done)
}

// probeStop says why a /check/ execution that was given the time given
// was stopped: its last caller left (left), at its deadline (deadline) or
// not, or else MaxCheckTimeout ended it. given is measured to the nearest
// 10 ms, so that the microseconds between a caller setting its deadline and
// asking (as /check/?timeout=9s does) do not make 9 s fall short of 9 s.
func (m *Monitor) probeStop(left, deadline bool, given time.Duration) stop {
	floor := m.cfg.Timeouts[0]
	given = given.Round(10 * time.Millisecond)
	switch {
	case !left:
		return stop{reason: fmt.Errorf("timed out after %v, the most a check may take", m.cfg.MaxCheckTimeout), record: true}
	case !deadline:
		return stop{} // every caller went away
	case given < floor:
		// A caller's short deadline must not make the tunnel unhealthy for
		// everyone: the check had less time than the monitor gives one.
		return stop{reason: fmt.Errorf("timed out at the caller's deadline after %v, "+
			"less than the %v check timeout: not recorded", given, floor), short: true, given: given}
	}
	return stop{reason: errors.New("timed out at the caller's deadline"), record: true}
}
