package check

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/tunnelprobe/tunnelprobe/internal/safely"
)

// RoundRobin returns a Checker that runs one of checks per call, each in
// turn: the first call the first, the next call the second, and so on
// around. Within a [Tier] each try goes to the next target, as the upstream
// VPN client spreads its tries over its targets. With no checks, Check
// returns ErrNoChecks. It is safe for concurrent use.
func RoundRobin(checks ...Checker) Checker {
	return &roundRobin{checks: slices.Clone(checks)}
}

type roundRobin struct {
	checks []Checker
	next   atomic.Uint64
}

func (r *roundRobin) Check(ctx context.Context) error {
	if len(r.checks) == 0 {
		return ErrNoChecks
	}
	i := (r.next.Add(1) - 1) % uint64(len(r.checks))
	return safely.Check(ctx, r.checks[i], ErrPanicked)
}

// Fallback returns a Checker that runs primary until primary fails with an
// error that is target (errors.Is), and from then on, that call included,
// runs fallback instead, for good: the upstream VPN client's switch from
// ICMP to a DNS query where ICMP is not permitted
// (Fallback(icmp, ErrICMPNotPermitted, dnsQuery)). It is safe for
// concurrent use.
func Fallback(primary Checker, target error, fallback Checker) Checker {
	return &fallbackCheck{primary: primary, target: target, fallback: fallback}
}

type fallbackCheck struct {
	primary, fallback Checker
	target            error
	fellBack          atomic.Bool
}

func (f *fallbackCheck) Check(ctx context.Context) error {
	if !f.fellBack.Load() {
		err := safely.Check(ctx, f.primary, ErrPanicked)
		if err == nil || !errors.Is(err, f.target) {
			return err
		}
		f.fellBack.Store(true)
	}
	return safely.Check(ctx, f.fallback, ErrPanicked)
}
