// Package middleware keeps the health state of a VPN or tunnel and serves
// it over HTTP, for Docker health checks and orchestrator probes alike.
//
// # Checks
//
// The monitor runs a check.Checker (package middleware/check: TCP, TLS,
// HTTP, DNS, DNS query and ICMP checks through any dialer, and their
// combinations). A check that panics is reported as a failure, never a
// crash.
//
// # Proof of life
//
// With [Config.Evidence], the monitor sends its own [LightProbe] through
// the tunnel every Interval; an answer within the Window passes a check at
// once, with no dial, and probes left unanswered for a whole Window fail it
// at once. Traffic counters ([CounterSource]) can only fail a check fast,
// never pass it: a far side that cannot hear us keeps sending.
//
// # The monitor
//
// [New] returns a [Monitor] and starts nothing. [Monitor.Run] drives the
// checks until its context ends, in one of three modes:
//
//   - [ModeLoop]: the loop checks, waits Period after a pass, retries after
//     a failure with the next timeout of the ladder, and heals while the
//     state is unhealthy. /check/ still runs checks on demand.
//   - [ModeProbe]: no loop, no heal; the state comes from /check/ calls.
//   - [ModeAuto]: the loop stands down while /check/ calls record a result
//     at least once per Period and takes over after two periods without
//     one. A call whose check did not run to a result (its caller left, or
//     gave it less than the check timeout) counts for nothing, so no
//     request can keep the state from going stale; and the heal stays the
//     loop's, on the state the calls recorded, so none can hold one back.
//
// Loop and probe results feed one state ([Snapshot]), so there is only ever
// one effective loop and nothing drifts out of phase. Package
// middleware/preset holds whole configurations: the health loop this
// project started from, and the upstream VPN client's current check.
//
// The state cannot go silently stale: the loop goes on checking while a heal
// runs, and it owes its next result by a time it knows; more than a Period
// past that, the snapshot is Stale and the status endpoint answers 503
// whatever the last result said. A running heal, bounded by HealTimeout,
// shows in the snapshot, the answers (also when it overruns its timeout),
// the observer and the metrics.
//
// # HTTP
//
// [Monitor.StatusHandler] reports the state (200 healthy, 503 otherwise;
// ?wait= long-polls for a healthy state). [Monitor.CheckHandler] runs the
// check with the request's context: concurrent requests share one
// execution, which is cancelled the moment its last caller leaves, and a
// check cut short that way, or by a caller's deadline shorter than the
// monitor's check timeout, is not recorded: nothing one client asks changes
// what another is told (see [Monitor.Probe]). Both answer in short text, or
// in the IETF health-check JSON format on request, to GET and HEAD only.
//
// Mount them with [Monitor.Handler] under any prefix of any router, with
// [Mount] on a ServeMux, with [Monitor.Middleware] around an existing router,
// or with package gorilla on a gorilla/mux router.
//
// # Concurrency
//
// A Monitor is safe for concurrent use. Run blocks and may run once at a
// time; cancel its context to stop it. /check/ executions run in a goroutine
// owned by their callers: the last caller to leave cancels it and waits for
// it, so nothing a check started outlives the requests that wanted it. An
// [Observer] is called synchronously from the goroutine doing the work.
package middleware
