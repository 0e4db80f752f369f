package preset

import (
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// Presets that reproduce the reference health loop (see docs/middleware.md).
var (
	// ReferenceTimeouts is the reference ladder: 2 s for the first try,
	// 2 s more after each consecutive failure, 10 s at most. It is also
	// what a [middleware.Ladder] reads as "reference".
	ReferenceTimeouts = []time.Duration{2 * time.Second, 4 * time.Second, 6 * time.Second, 8 * time.Second, 10 * time.Second}
	// ReferenceHealBackoff heals after 6 s unhealthy, then 11 s, 16 s, ...
	// It is also what a zero Config.HealBackoff means.
	ReferenceHealBackoff = middleware.HealBackoff{Initial: 6 * time.Second, Step: 5 * time.Second}
)

// Reference returns a Config that reproduces the reference health loop:
// the 2-10 s ladder, a 5 s period, unhealthy after one failure and heal
// after 6 s, then 11 s, 16 s... Set Heal to make it heal.
func Reference() middleware.Config {
	return middleware.Config{
		Period:           5 * time.Second,
		Timeouts:         append([]time.Duration(nil), ReferenceTimeouts...),
		FailureThreshold: 1,
		HealBackoff:      ReferenceHealBackoff,
	}
}
