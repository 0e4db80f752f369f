package middleware

import (
	"context"
	"errors"
	"log/slog"
	"sync"
)

// NewSlogObserver returns an Observer that logs to l: checks at debug level
// (failures at warn), state changes at info (unhealthy at warn), heals at
// warn when they start and end (failed heals at error), light probes at
// debug level, and at warn when they start to prove nothing
// (ErrProvesNothing), at info when they count again.
func NewSlogObserver(l *slog.Logger) Observer {
	var refusal provesNothingLog
	return ObserverFuncs{
		OnCheckStarted: func(s CheckStart) {
			l.Debug("check started", "source", s.Source.String(), "timeout", s.Timeout)
		},
		OnCheckFinished: func(r Result) {
			attrs := []any{"source", r.Source.String(), "duration", r.Duration, "decided_by", r.DecidedBy()}
			if r.Via != "" {
				attrs = append(attrs, "via", r.Via)
			}
			if r.Evidence != "" && r.Err == nil {
				attrs = append(attrs, "evidence", r.Evidence)
			}
			switch {
			case r.Abandoned:
				l.Debug("check abandoned: every caller left", attrs...)
			case r.Err != nil:
				l.Warn("check failed", append(attrs, "err", r.Err)...)
			default:
				l.Debug("check passed", attrs...)
			}
		},
		OnStateChanged: func(from, to Snapshot) {
			level := slog.LevelInfo
			attrs := []any{"from", from.Status.String(), "to", to.Status.String(), "mode", to.Mode.String()}
			if to.Status == StatusUnhealthy {
				level = slog.LevelWarn
				attrs = append(attrs, "consecutive_failures", to.ConsecutiveFailures, "err", to.Last.Err)
			}
			l.Log(context.Background(), level, "health state changed", attrs...)
		},
		OnHealStarted: func(s HealStart) {
			l.Warn("heal started", "attempt", s.Attempt, "timeout", s.Timeout)
		},
		OnLightProbe: func(r LightProbeResult) {
			attrs := []any{"kind", r.Kind, "target", r.Target, "rtt", r.RTT}
			if refusal.changed(r.Err) {
				// Said once when it starts and when it ends, not four
				// times a second.
				if r.Err != nil {
					l.Warn("light probe proves nothing; the active check decides", "kind", r.Kind, "target", r.Target, "err", r.Err)
				} else {
					l.Info("light probe counts again", attrs...)
				}
			}
			if r.Err != nil {
				l.Debug("light probe unanswered", append(attrs, "err", r.Err)...)
				return
			}
			l.Debug("light probe answered", attrs...)
		},
		OnHealed: func(e HealEvent) {
			if e.Err != nil {
				l.Error("heal failed", "attempt", e.Attempt, "duration", e.Duration, "err", e.Err)
				return
			}
			l.Warn("healed", "attempt", e.Attempt, "duration", e.Duration)
		},
	}
}

// provesNothingLog remembers why the light probe last proved nothing, so
// that the log says it when it starts, changes and ends.
type provesNothingLog struct {
	mu   sync.Mutex
	last string
}

// changed reports whether err, a light probe's outcome, starts, changes or
// ends a spell of probes that prove nothing.
func (p *provesNothingLog) changed(err error) bool {
	why := ""
	if errors.Is(err, ErrProvesNothing) {
		why = err.Error()
	} else if err != nil {
		return false // an unanswered probe neither starts nor ends one
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	changed := why != p.last
	p.last = why
	return changed
}
