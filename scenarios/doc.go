// Package scenarios answers the question the project exists for: under a
// loaded link and under a real outage, which health configuration restarts a
// working tunnel for nothing, and which detects a dead one fastest?
//
// A [Spec] (Go, or YAML/JSON through [Parse], unknown fields rejected) gives
// the link over time, the load, how a restarted container comes back, and
// the health configurations to compare, each with its prober (package
// scenarios/prober).
// [DefaultSuite] and [QuickSuite] are the built-in comparisons.
//
// The package function Run puts every configuration on its own lab
// (package harness) with the same link and load (package loadgen), side by
// side: a health server (package middleware) checks the lab's TLS target
// through the tunnel and heals by restarting the client peer; the prober
// probes it and, on a restart, the container (client peer and health
// server) goes down for the start delay and the crash back-off and comes
// back with a fresh state. Run records every probe, check, state change,
// restart and heal, and measures each configuration ([ConfigReport]): false
// restarts and heals while the link worked, how fast each outage was
// detected, flaps, probe success, check latency, broken connections and
// utilisation. [Report] writes the table, report.md, report.json and
// timeline.png.
//
// Run owns every goroutine and lab it starts and stops them all before it
// returns, also when its context ends early; the report then covers what
// was measured and is marked Interrupted.
package scenarios
