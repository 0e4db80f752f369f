// Package middleware keeps the health state of a VPN or tunnel and serves
// it over HTTP, for Docker health checks and orchestrator probes alike.
//
// # Checks
//
// A [Checker] tests the tunnel once. The built-in ones, [TCPCheck],
// [TLSCheck], [HTTPCheck] and [DNSCheck], dial through any [Dialer]: the host
// network, a WireGuard netstack, a SOCKS5 proxy. [AnyOf] and [AllOf] combine
// checks over several targets. Every built-in check ends when its context
// does; a check that panics is reported as a failure. Package
// middleware/target reads the text syntax of a check target into these
// checks.
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
//   - [ModeAuto]: the loop stands down while /check/ is called at least once
//     per Period and takes over, heal included, after two periods without a
//     call.
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
