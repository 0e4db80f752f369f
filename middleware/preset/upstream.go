package preset

import (
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// The timings of the upstream VPN client's current health check, none of
// which it lets its users change.
var (
	// UpstreamStartupTries bounds the startup check: 6 s for every target
	// at once.
	UpstreamStartupTries = middleware.Ladder{6 * time.Second}
	// UpstreamSmallEvery and UpstreamSmallTries are the small check's: an
	// ICMP echo every minute, tried up to 10 times.
	UpstreamSmallEvery = time.Minute
	UpstreamSmallTries = middleware.Ladder{
		5 * time.Second, 5 * time.Second, 5 * time.Second,
		10 * time.Second, 10 * time.Second, 10 * time.Second,
		15 * time.Second, 15 * time.Second, 15 * time.Second,
		30 * time.Second,
	}
	// UpstreamFullEvery and UpstreamFullTries are the full check's: a TCP
	// dial and TLS handshake every 5 minutes, tried up to 3 times.
	UpstreamFullEvery = 5 * time.Minute
	UpstreamFullTries = middleware.Ladder{10 * time.Second, 15 * time.Second, 30 * time.Second}

	// UpstreamTargets and UpstreamEchoTargets are the upstream's default
	// targets: of the startup and full checks (TLS on port 443), and of the
	// small check's echoes.
	UpstreamTargets     = []string{"cloudflare.com:443", "github.com:443"}
	UpstreamEchoTargets = []string{"1.1.1.1", "8.8.8.8"}
)

// Upstream returns a Config that reproduces the current health check of the
// upstream VPN client (the successor of the reference loop, see
// docs/middleware.md), built from package middleware's parts:
//
//   - startup: every one of full at once ([check.AnyOf]), 6 s for all;
//   - small: every 60 s, the small check (see [UpstreamSmall]), with up to
//     10 tries of 5, 5, 5, 10, 10, 10, 15, 15, 15 and 30 s;
//   - full: every 5 minutes, full in turn ([check.RoundRobin]), with
//     up to 3 tries of 10, 15 and 30 s;
//   - a tier whose every try failed turns the state unhealthy, and with
//     Heal set restarts the VPN at once; the schedule then starts over,
//     startup check first. Without Heal, as with the upstream's restarts
//     turned off, the schedule goes on.
//
// Pass the monitor full's checks as its checker too (AnyOf(full...)), for
// /check/, which the upstream does not have. Set Heal, Observer and Clock
// as for any Config.
//
// It differs from the original where the original cannot be reproduced or
// would make runs unrepeatable:
//   - When the small and the full check fall due together, the original
//     picks one at random; here the small one runs first.
//   - RoundRobin carries on from one run to the next; the original starts
//     each run at its first target. With one target, as in the lab, they
//     agree.
//   - A run after a failed one starts at least RetryWait (1 s) after it, so
//     that a check failing at once cannot spin; the original has no such
//     wait, but its restart of the VPN takes seconds anyway.
//   - The health server is package middleware's: the status endpoint answers
//     503, not 500, when unhealthy, which no prober tells apart.
func Upstream(small check.Checker, full ...check.Checker) middleware.Config {
	return middleware.Config{
		Mode:             middleware.ModeLoop,
		FailureThreshold: 1,
		Tiers: []middleware.Tier{
			{Name: "startup", Check: check.AnyOf(full...), Tries: UpstreamStartupTries},
			{Name: "small", Check: small, Every: UpstreamSmallEvery, Tries: UpstreamSmallTries},
			{Name: "full", Check: check.RoundRobin(full...), Every: UpstreamFullEvery, Tries: UpstreamFullTries},
		},
	}
}

// UpstreamSmall returns the upstream VPN client's small check: an ICMP echo
// to each of hosts in turn through dialer (nil: the host's ICMP socket),
// which falls back for good to one DNS query over UDP to dnsServer once
// ICMP is not permitted. The original sends its echoes from a raw socket,
// which needs CAP_NET_RAW, where this one uses the unprivileged ICMP socket
// (see [check.ICMP]); its DNS check resolves github.com and moves
// on to the next of several public resolvers after each failure, where this
// one asks dnsServer alone.
func UpstreamSmall(dialer check.Dialer, dnsServer string, hosts ...string) check.Checker {
	echoes := make([]check.Checker, len(hosts))
	for i, h := range hosts {
		echoes[i] = check.ICMP{Address: h, Dialer: dialer}
	}
	return check.Fallback(check.RoundRobin(echoes...), check.ErrICMPNotPermitted, check.DNSQuery{Server: dnsServer, Name: "github.com", Dialer: dialer, AnyAnswer: true})
}
