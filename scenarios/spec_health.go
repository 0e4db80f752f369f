package scenarios

import (
	"errors"
	"fmt"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
)

// config returns the middleware configuration, without Heal, Observer and
// Clock, which the runner sets, and for a preset without its checks, which
// the runner adds through its tunnel.
func (h HealthSpec) config() (middleware.Config, error) {
	switch h.Preset {
	case "":
	case "upstream":
		return h.upstreamConfig()
	default:
		return middleware.Config{}, fmt.Errorf("preset: %q is not upstream", h.Preset)
	}
	mode := h.Mode
	cfg := middleware.Config{Mode: mode, Period: h.Period.Duration, FailureThreshold: h.FailureThreshold}
	cfg.Timeouts = h.Timeouts
	if h.HealBackoff != nil {
		if h.HealBackoff.Initial.Duration <= 0 {
			return cfg, errors.New("heal_backoff.initial: must be positive")
		}
		cfg.HealBackoff = middleware.HealBackoff{Initial: h.HealBackoff.Initial.Duration, Step: h.HealBackoff.Step.Duration}
	}
	if h.Heal && mode == middleware.ModeProbe {
		return cfg, errors.New("heal: probe mode never heals")
	}
	valid := cfg
	if h.Evidence != nil {
		cfg.Evidence = &middleware.Evidence{Window: h.Evidence.Window.Duration, Interval: h.Evidence.Interval.Duration, MaxLoss: h.Evidence.MaxLoss}
		e := *cfg.Evidence
		e.Source = middleware.CounterSourceFunc(nil) // the trial's client peer
		valid.Evidence = &e
	}
	// Validate checks the rest and names the field.
	return cfg, valid.Validate()
}

// upstreamConfig is config for the upstream preset.
func (h HealthSpec) upstreamConfig() (middleware.Config, error) {
	if h.Mode != middleware.ModeLoop {
		return middleware.Config{}, fmt.Errorf("mode: the upstream preset is a loop, not %s", h.Mode)
	}
	if h.Period.Duration != 0 || len(h.Timeouts) > 0 || h.FailureThreshold != 0 || h.HealBackoff != nil || h.Evidence != nil {
		return middleware.Config{}, errors.New("preset: upstream fixes its timings: leave period, timeouts, failure_threshold, heal_backoff and evidence out")
	}
	return preset.Upstream(nil), nil
}

// scheduleNeeds is, for the upstream preset with its restarts on, the
// longest its schedule takes to act on a dead tunnel: a small check's
// period, then all its tries. Zero for the other configurations: their
// probes act within seconds, or never.
func (h HealthSpec) scheduleNeeds() time.Duration {
	if h.Preset != "upstream" || !h.Heal {
		return 0
	}
	return preset.UpstreamSmallEvery + preset.UpstreamSmallTries.Total()
}
