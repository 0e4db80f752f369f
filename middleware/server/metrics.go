package server

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/prom"
)

// MetricsPath is where Config.Metrics serves the Prometheus metrics.
const MetricsPath = "/metrics"

// metrics is Config.Metrics: a registry of the monitor's metrics, the
// server's own, the Go runtime's and the process's.
type metrics struct {
	reg *prometheus.Registry
	// refused counts the connections refused past MaxConnections.
	refused prometheus.Counter
}

// newMetrics adds the metrics' observer to cfg, next to cfg's own.
func newMetrics(cfg *middleware.Config) (*metrics, error) {
	m := &metrics{reg: prom.NewRegistry(), refused: prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: prom.Namespace,
		Name:      "connections_refused_total",
		Help:      "Connections refused at once because the listener served MaxConnections already.",
	})}
	m.reg.MustRegister(m.refused)
	obs, err := prom.NewObserver(m.reg, prom.Opts{})
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	cfg.Observer = middleware.MultiObserver(cfg.Observer, obs)
	return m, nil
}

// mount returns a handler that answers MetricsPath with the metrics, mon's
// state among them, and leaves every other path to health. With evidence
// from counters, the tunnel's counters are metrics too, and so is whatever
// else their source collects (a WireGuard device's peers).
func (m *metrics) mount(mon *middleware.Monitor, ev *middleware.Evidence, health http.Handler) http.Handler {
	m.reg.MustRegister(prom.NewCollector(mon, prom.Opts{}))
	if ev != nil && ev.Source != nil {
		m.reg.MustRegister(prom.NewTunnelCollector(ev.Source, prom.Opts{}))
		if c, ok := ev.Source.(prometheus.Collector); ok {
			m.reg.MustRegister(c)
		}
	}
	metrics := prom.Handler(m.reg)
	// Not a ServeMux: it would clean and redirect paths that the health
	// handler answers as they come.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == MetricsPath {
			metrics.ServeHTTP(w, r)
			return
		}
		health.ServeHTTP(w, r)
	})
}
