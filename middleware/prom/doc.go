// Package prom exports the health middleware's activity as Prometheus
// metrics. It lives apart from package middleware so that the middleware
// does not pull in the Prometheus client.
//
// # Use
//
// [NewObserver] returns an [Observer] to set as middleware.Config.Observer:
// it counts the checks and light probes as they happen. [NewCollector] reads the monitor's
// state and mode at every scrape. Register both with one registry:
//
//	obs, err := prom.NewObserver(reg, prom.Opts{})
//	mon, err := middleware.New(check, middleware.Config{Observer: obs})
//	reg.MustRegister(prom.NewCollector(mon, prom.Opts{}))
//	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Metrics
//
// Labels: source is "loop" (the health loop) or "probe" (a /check/ request
// or Monitor.Probe); result is "pass", "fail" or "abandoned" (a probe check
// that says nothing about the tunnel and is not recorded in the state: every
// caller left, or their deadline cut it off before the check timeout).
//
//	tunnelprobe_checks_total{source,result}                counter: checks run, by how they ended
//	tunnelprobe_check_duration_seconds{source,result}      histogram: how long each check took
//	tunnelprobe_checks_in_flight{source}                   gauge: checks running now
//	tunnelprobe_check_coalesced_total                      counter: /check/ callers that joined a running check instead of starting one
//	tunnelprobe_heals_total{result}                        counter: heal calls, result "ok", "error" or "timeout" (ran into the heal timeout)
//	tunnelprobe_heal_duration_seconds                      histogram: how long each heal took
//	tunnelprobe_state_changes_total{to}                    counter: changes of the state, to "healthy" or "unhealthy"
//	tunnelprobe_state{state}                               gauge: 1 for the current state ("unknown", "healthy", "unhealthy"), 0 for the others
//	tunnelprobe_consecutive_failures                       gauge: recorded failed checks since the last pass
//	tunnelprobe_state_since_timestamp_seconds              gauge: when the state last changed (Unix time); absent while it never has
//	tunnelprobe_last_check_timestamp_seconds               gauge: when the last recorded check ended (Unix time); absent before the first
//	tunnelprobe_mode{mode}                                 gauge: 1 for the monitor's mode ("loop", "probe", "auto"), 0 for the others
//	tunnelprobe_stale                                      gauge: 1 while the loop is more than a period late with the result it owes
//	tunnelprobe_loop_due_timestamp_seconds                 gauge: when the loop owes its next result (Unix time); absent while no loop runs
//	tunnelprobe_heal_in_progress                           gauge: 1 while a heal runs
//	tunnelprobe_heal_started_timestamp_seconds             gauge: when the running heal started (Unix time); absent while none runs
//	tunnelprobe_evidence_decisions_total{source,proof,result} counter: checks that evidence decided without an active check, by the proof that did (middleware.Result.Proof)
//	tunnelprobe_light_probes_total{kind,result}            counter: light probes that ended, "answered" or "unanswered"; kind "icmp", "udp-dns" or "tcp"
//	tunnelprobe_light_probe_rtt_seconds{kind}              histogram: round trip of the answered light probes
//	tunnelprobe_light_probe_info{kind,target}              gauge: 1, naming the light probe in use; absent without one
//	tunnelprobe_light_probe_silent{kind,target}            gauge: 1 while the target has not answered for a window; with the state healthy, silent while the tunnel works
//	tunnelprobe_light_probe_loss_ratio{kind,target}        gauge: share of the light probes unanswered over the loss window (Evidence.LossWindow)
//	tunnelprobe_light_probe_path_mtu_bytes{kind,target}    gauge: the largest IP packet a probe of the path MTU got an answer for over the loss window (Evidence.MTUProbeEvery); absent without such probes
//	tunnelprobe_light_probe_mtu_black_hole{kind,target}    gauge: 1 while probes of the interface's full MTU are lost although small ones are answered
//	tunnelprobe_evidence_counters_readable                 gauge: 1 when the last reading of the traffic counters (Evidence.Source) succeeded, 0 when it failed; absent without them
//
// [NewTunnelCollector] exports the counters of a middleware.CounterSource,
// read at each scrape (a source that fails reads as no sample):
//
//	tunnelprobe_tunnel_received_bytes_total                counter: bytes the tunnel received
//	tunnelprobe_tunnel_sent_bytes_total                    counter: bytes the tunnel sent
//	tunnelprobe_tunnel_received_packets_total              counter: packets received (absent for a source that counts bytes only)
//	tunnelprobe_tunnel_sent_packets_total                  counter: packets sent (likewise)
//
// The /check/ requests a probe made are tunnelprobe_checks_total{source="probe"}
// plus tunnelprobe_check_coalesced_total: under a probe storm the first grows
// by one while the second takes the storm. Opts.ConstLabels (e.g. a tunnel
// name) are added to every metric.
//
// # Concurrency
//
// The Observer's methods are called synchronously by the monitor, from the
// goroutine doing the work; they only update atomic Prometheus metrics. The
// Collector reads Monitor.Snapshot, which takes one short lock, at each
// scrape. Nothing here starts a goroutine or needs closing.
package prom
