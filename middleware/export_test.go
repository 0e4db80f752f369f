package middleware

import "time"

// Test seams, visible to package middleware_test only.

// TCPProbe is the tcp light probe of addr, which ChooseLightProbe would
// take only after icmp and udp-dns.
var TCPProbe = tcpProbe

// SetSleepHook makes the loop call f each time it has set its timer.
func SetSleepHook(m *Monitor, f func(until time.Time)) { m.sleeping = f }

// SetJoinHook makes Probe call f each time a caller has joined a check.
func SetJoinHook(m *Monitor, f func()) { m.flights.joined = f }

// SampleEvidence takes one sample of the monitor's traffic counters now, as
// Run does every Evidence.Interval.
func SampleEvidence(m *Monitor) { m.evidence.counters.sample() }

// SetHealing and EndHealing record a heal's start and end as the loop
// does, without a loop.
func SetHealing(m *Monitor, h *HealStart) { m.setHealing(h) }
func EndHealing(m *Monitor, h *HealStart) { m.endHealing(h) }
