package main

import (
	"flag"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/prom"
)

// metricsPath is where serve --metrics exposes the Prometheus metrics.
const metricsPath = "/metrics"

// serveMetrics is serve's --metrics flag and what it wires: a registry with
// the middleware's metrics (package prom), the Go runtime's and the
// process's, served at /metrics on the health listener.
type serveMetrics struct {
	enabled bool
	reg     *prometheus.Registry
}

// registerServeMetrics registers --metrics on fs.
func registerServeMetrics(fs *flag.FlagSet) *serveMetrics {
	m := &serveMetrics{}
	fs.BoolVar(&m.enabled, "metrics", false, "also serve Prometheus metrics at "+metricsPath+" on the same listener (names in docs/deployment.md)")
	return m
}

// instrument adds the metrics observer to cfg, next to cfg's own, when
// --metrics is on.
func (m *serveMetrics) instrument(cfg *middleware.Config) error {
	if !m.enabled {
		return nil
	}
	m.reg = prometheus.NewRegistry()
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	obs, err := prom.NewObserver(m.reg, prom.Opts{})
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	cfg.Observer = middleware.MultiObserver(cfg.Observer, obs)
	return nil
}

// wrappers returns what server.Serve puts in front of mon's handler: with
// --metrics, /metrics answered from the registry and every other path left
// to the health handler; without, nothing.
func (m *serveMetrics) wrappers(mon *middleware.Monitor) []func(http.Handler) http.Handler {
	if m.reg == nil {
		return nil
	}
	m.reg.MustRegister(prom.NewCollector(mon, prom.Opts{}))
	metrics := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// Two scrapes at once (say, two Prometheus replicas) are plenty;
		// more get 503 at once rather than piling up.
		MaxRequestsInFlight: 2,
	})
	return []func(http.Handler) http.Handler{func(health http.Handler) http.Handler {
		// Not a ServeMux: it would clean and redirect paths that the
		// health handler answers as they come.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == metricsPath {
				metrics.ServeHTTP(w, r)
				return
			}
			health.ServeHTTP(w, r)
		})
	}}
}
