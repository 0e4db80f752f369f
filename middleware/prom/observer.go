package prom

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// Namespace prefixes every metric name.
const Namespace = "tunnelprobe"

// DefaultCheckBuckets are the check duration buckets, in seconds: from a
// loopback dial to a handshake that waits out TCP's retransmission timeouts
// behind a full queue, up to the longest /check/ by default (60 s).
var DefaultCheckBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 6, 8, 10, 15, 20, 30, 60}

// Opts configures the metrics. The zero value is useful.
type Opts struct {
	// ConstLabels are added to every metric, e.g. {"tunnel": "wg0"} when
	// one process serves several monitors. Nil adds none.
	ConstLabels prometheus.Labels
	// CheckBuckets are the buckets of the check duration histogram, in
	// seconds. Nil means DefaultCheckBuckets.
	CheckBuckets []float64
}

// Observer records the monitor's checks, joins and heals as Prometheus
// metrics. Set it as middleware.Config.Observer (it is a
// middleware.Observer and a middleware.CoalesceObserver); create it with
// [NewObserver]. Its methods are safe for concurrent use.
type Observer struct {
	checks       *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	inFlight     *prometheus.GaugeVec
	coalesced    prometheus.Counter
	heals        *prometheus.CounterVec
	healDuration prometheus.Histogram
	changes      *prometheus.CounterVec
	evidence     *prometheus.CounterVec
	probes       *prometheus.CounterVec
	probeRTT     *prometheus.HistogramVec
}

var (
	_ middleware.Observer           = (*Observer)(nil)
	_ middleware.CoalesceObserver   = (*Observer)(nil)
	_ middleware.LightProbeObserver = (*Observer)(nil)
)

// ProbeRTTBuckets are the light probes' round-trip buckets, in seconds:
// from a loopback echo to an answer that waited out a deep queue, up to
// the default probe timeout (10 s).
var ProbeRTTBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10}

// NewObserver returns an Observer whose metrics are registered with reg
// (nil: not registered, e.g. to register them later as a
// prometheus.Collector; *Observer is one). The error is reg's, e.g. when
// metrics of the same names and labels are registered already.
func NewObserver(reg prometheus.Registerer, opts Opts) (*Observer, error) {
	buckets := opts.CheckBuckets
	if buckets == nil {
		buckets = DefaultCheckBuckets
	}
	cl := opts.ConstLabels
	o := &Observer{
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "checks_total", ConstLabels: cl,
			Help: "Checks run, by source (loop, probe, or full: the active check run while the light probes pass) and result (pass, fail, or abandoned when every caller left).",
		}, []string{"source", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "check_duration_seconds", ConstLabels: cl, Buckets: buckets,
			Help: "Duration of the checks, by source and result.",
		}, []string{"source", "result"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "checks_in_flight", ConstLabels: cl,
			Help: "Checks running now, by source.",
		}, []string{"source"}),
		coalesced: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "check_coalesced_total", ConstLabels: cl,
			Help: "Check requests that joined a check already running instead of starting one.",
		}),
		heals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "heals_total", ConstLabels: cl,
			Help: "Heal calls, by result (ok, error, or timeout when it ran into the heal timeout).",
		}, []string{"result"}),
		healDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "heal_duration_seconds", ConstLabels: cl,
			Buckets: []float64{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120},
			Help:    "Duration of the heal calls.",
		}),
		evidence: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "evidence_decisions_total", ConstLabels: cl,
			Help: "Checks that evidence decided without an active check, by source, proof (light-probe, delivery, counters, full-check) and result.",
		}, []string{"source", "proof", "result"}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "light_probes_total", ConstLabels: cl,
			Help: "Light probes sent through the tunnel that ended, by kind (icmp, udp-dns, tcp) and result (answered, unanswered, proves-nothing: its target is answered by this host or not routed through the tunnel, or a DNS answer any resolver gives, SERVFAIL or REFUSED).",
		}, []string{"kind", "result"}),
		probeRTT: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "light_probe_rtt_seconds", ConstLabels: cl, Buckets: ProbeRTTBuckets,
			Help: "Round trip of the answered light probes, by kind.",
		}, []string{"kind"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "state_changes_total", ConstLabels: cl,
			Help: "Changes of the health state, by the state changed to.",
		}, []string{"to"}),
	}
	// Every label value exists from the start, so that rate() and absent()
	// work before the first event of each kind.
	for _, src := range []string{middleware.SourceLoop.String(), middleware.SourceProbe.String()} {
		o.inFlight.WithLabelValues(src)
		for _, res := range []string{"pass", "fail", "abandoned"} {
			o.checks.WithLabelValues(src, res)
		}
		for proof, results := range evidenceResults {
			for _, res := range results {
				o.evidence.WithLabelValues(src, proof, res)
			}
		}
	}
	for _, res := range []string{"ok", "error", "timeout"} {
		o.heals.WithLabelValues(res)
	}
	for _, to := range []middleware.Status{middleware.StatusHealthy, middleware.StatusUnhealthy} {
		o.changes.WithLabelValues(to.String())
	}
	if reg != nil {
		if err := reg.Register(o); err != nil {
			return nil, fmt.Errorf("prom: register the observer's metrics: %w", err)
		}
	}
	return o, nil
}

// Describe implements prometheus.Collector.
func (o *Observer) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range o.collectors() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (o *Observer) Collect(ch chan<- prometheus.Metric) {
	for _, c := range o.collectors() {
		c.Collect(ch)
	}
}

func (o *Observer) collectors() []prometheus.Collector {
	return []prometheus.Collector{o.checks, o.duration, o.inFlight, o.coalesced, o.heals, o.healDuration, o.changes, o.evidence, o.probes, o.probeRTT}
}

// evidenceResults are the results each proof can give a check: delivery
// only passes; the counters and the full check only fail.
var evidenceResults = map[string][]string{
	middleware.ProofLightProbe: {"pass", "fail"},
	middleware.ProofDelivery:   {"pass"},
	middleware.ProofCounters:   {"fail"},
	middleware.ProofFullCheck:  {"fail"},
}

// CheckStarted implements middleware.Observer.
func (o *Observer) CheckStarted(s middleware.CheckStart) {
	o.inFlight.WithLabelValues(s.Source.String()).Inc()
}

// CheckFinished implements middleware.Observer.
func (o *Observer) CheckFinished(r middleware.Result) {
	src := r.Source.String()
	res := resultLabel(r)
	o.inFlight.WithLabelValues(src).Dec()
	o.checks.WithLabelValues(src, res).Inc()
	o.duration.WithLabelValues(src, res).Observe(r.Duration.Seconds())
	if r.Evidence != "" {
		o.evidence.WithLabelValues(src, r.Proof, res).Inc()
	}
}

// CheckJoined implements middleware.CoalesceObserver.
func (o *Observer) CheckJoined(middleware.CheckJoin) { o.coalesced.Inc() }

// StateChanged implements middleware.Observer.
func (o *Observer) StateChanged(_, to middleware.Snapshot) {
	o.changes.WithLabelValues(to.Status.String()).Inc()
}

// HealStarted implements middleware.Observer. A running heal is reported by
// the [Collector], read at each scrape.
func (o *Observer) HealStarted(middleware.HealStart) {}

// Healed implements middleware.Observer.
func (o *Observer) Healed(e middleware.HealEvent) {
	res := "ok"
	switch {
	case errors.Is(e.Err, middleware.ErrHealTimeout):
		res = "timeout"
	case e.Err != nil:
		res = "error"
	}
	o.heals.WithLabelValues(res).Inc()
	o.healDuration.Observe(e.Duration.Seconds())
}

func resultLabel(r middleware.Result) string {
	switch {
	case r.Abandoned:
		return "abandoned"
	case r.Err != nil:
		return "fail"
	}
	return "pass"
}

// LightProbeFinished implements middleware.LightProbeObserver.
func (o *Observer) LightProbeFinished(r middleware.LightProbeResult) {
	if r.Size > 0 {
		return // a probe of the path MTU: the Collector reports what they show
	}
	if errors.Is(r.Err, middleware.ErrProvesNothing) {
		o.probes.WithLabelValues(r.Kind, "proves-nothing").Inc()
		return
	}
	if r.Err != nil {
		o.probes.WithLabelValues(r.Kind, "unanswered").Inc()
		return
	}
	o.probes.WithLabelValues(r.Kind, "answered").Inc()
	o.probeRTT.WithLabelValues(r.Kind).Observe(r.RTT.Seconds())
}
