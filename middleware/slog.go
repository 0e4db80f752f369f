package middleware

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
)

// NewSlogObserver returns an Observer that logs to l: checks at debug level
// (failures at warn), state changes at info (unhealthy at warn), heals at
// warn when they start and end (failed heals at error), light probes at
// debug level, and at warn when they start to prove nothing
// (ErrProvesNothing), at info when they count again; the probes of the
// path MTU at info when the largest size answered changes, at warn when a
// black hole starts.
func NewSlogObserver(l *slog.Logger) Observer {
	var silent changeLog[bool]
	return ObserverFuncs{
		OnCheckStarted: func(s CheckStart) {
			l.Debug("check started", "source", s.Source.String(), "timeout", s.Timeout)
		},
		OnCheckFinished: func(r Result) {
			if !r.Abandoned && silent.changed(len(r.SilentProbes) > 0) {
				// Said when it starts and ends: the probe's silence fails
				// nothing while the tunnel is proven alive another way.
				if len(r.SilentProbes) > 0 {
					l.Warn("light probe silent while the tunnel works", "targets", strings.Join(r.SilentProbes, ", "), "decided_by", r.DecidedBy())
				} else {
					l.Info("light probe silence while the tunnel works ended", "decided_by", r.DecidedBy(), "passed", r.Passed())
				}
			}
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
		OnLightProbe: logLightProbe(l),
		OnHealed: func(e HealEvent) {
			if e.Err != nil {
				l.Error("heal failed", "attempt", e.Attempt, "duration", e.Duration, "err", e.Err)
				return
			}
			l.Warn("healed", "attempt", e.Attempt, "duration", e.Duration)
		},
	}
}

// logLightProbe returns the light probe logger of NewSlogObserver: each
// probe at debug level, and what changes (probes that prove nothing, the
// path MTU, a black hole) once, when it changes, not four times a second.
func logLightProbe(l *slog.Logger) func(LightProbeResult) {
	var refusal changeLog[string]
	var blackHole changeLog[bool]
	var pathMTU changeLog[int]
	return func(r LightProbeResult) {
		attrs := []any{"kind", r.Kind, "target", r.Target, "rtt", r.RTT}
		if r.Size > 0 {
			// A probe of the path MTU: what they show is said when it
			// changes.
			if m := r.PathMTU; pathMTU.changed(m.Largest) {
				l.Info("path MTU measured", "kind", r.Kind, "target", r.Target, "largest_answered", m.Largest, "interface_mtu", m.MTU)
			}
			if hole := r.PathMTU.BlackHole; blackHole.changed(hole != nil) {
				if hole != nil {
					l.Warn("path MTU black hole: the users' full-size packets are lost", append(attrs, "err", hole)...)
				} else {
					l.Info("path MTU black hole ended", append(attrs, "path_mtu", r.PathMTU.Largest)...)
				}
			}
			return
		}
		why := ""
		if errors.Is(r.Err, ErrProvesNothing) {
			why = r.Err.Error()
		}
		if (r.Err == nil || why != "") && refusal.changed(why) {
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
	}
}

// changeLog remembers the last value of something the log says only when
// it changes (why the light probe proves nothing, a black hole), not four
// times a second.
type changeLog[T comparable] struct {
	mu   sync.Mutex
	last T
}

// changed records v and reports whether it differs from the last one (at
// first, from T's zero value).
func (c *changeLog[T]) changed(v T) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := v != c.last
	c.last = v
	return changed
}
