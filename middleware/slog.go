package middleware

import (
	"context"
	"log/slog"
)

// NewSlogObserver returns an Observer that logs to l: checks at debug level
// (failures at warn), state changes at info (unhealthy at warn), heals at
// warn when they start and end (failed heals at error), light probes at
// debug level.
func NewSlogObserver(l *slog.Logger) Observer {
	return ObserverFuncs{
		OnCheckStarted: func(s CheckStart) {
			l.Debug("check started", "source", s.Source.String(), "timeout", s.Timeout)
		},
		OnCheckFinished: func(r Result) {
			attrs := []any{"source", r.Source.String(), "duration", r.Duration, "decided_by", r.DecidedBy()}
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
