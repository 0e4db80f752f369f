// Package prom exports a load run's live counters as Prometheus metrics, as
// package middleware/prom does for the health middleware: [Metrics] folds
// each [loadgen.Second] of the series (summed over the processes of a
// multi-process run) into counters and gauges named tunnelprobe_load_*. It
// lives apart from package loadgen so that the load generator does not pull
// in the Prometheus client.
//
//	reg := prometheus.NewRegistry()
//	m, err := prom.NewMetrics(reg)
//	cfg.OnSecond = m.Observe
//	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Metrics
//
//	tunnelprobe_load_bytes_total{direction}       counter: payload bytes, "up" to the sink, "down" from it
//	tunnelprobe_load_connects_total               counter: connections opened
//	tunnelprobe_load_connect_errors_total         counter: dials that failed
//	tunnelprobe_load_disruptions_total            counter: established connections that broke
//	tunnelprobe_load_probes_total                 counter: health probes run under the load
//	tunnelprobe_load_probe_failures_total         counter: probes that failed or timed out
//	tunnelprobe_load_cpu_seconds_total            counter: CPU time of the load's processes
//	tunnelprobe_load_tcp_retransmits_total        counter: TCP segments the machine retransmitted
//	tunnelprobe_load_tcp_resets_total             counter: TCP resets the machine sent
//	tunnelprobe_load_connections_open             gauge: connections open at the end of the last second
//	tunnelprobe_load_connections_target           gauge: connections the run (or a sweep's level) holds
//	tunnelprobe_load_probe_max_seconds            gauge: the slowest passing probe of the last second
//	tunnelprobe_load_resident_memory_bytes        gauge: resident memory of the load's processes
//	tunnelprobe_load_open_fds                     gauge: open descriptors of the load's processes
//	tunnelprobe_load_threads                      gauge: threads of the load's processes
//
// # Concurrency
//
// Observe and SetTarget only update atomic Prometheus metrics: call them
// from any goroutine. Nothing here starts a goroutine or needs closing.
package prom
