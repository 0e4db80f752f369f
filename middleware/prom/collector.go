package prom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// Collector reports a monitor's state and mode, read at each scrape, so they
// are right from the first scrape on (an event-driven gauge would not know
// the state before the first change). Create it with [NewCollector].
type Collector struct {
	mon *middleware.Monitor

	state, failures, since, lastCheck, mode *prometheus.Desc
	stale, healing, healStart, dueBy        *prometheus.Desc
	probeInfo, probeLoss, countersReadable  *prometheus.Desc
	pathMTU, mtuBlackHole, probeSilent      *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// Every state and mode, for the one-hot gauges.
var (
	allStatus = []middleware.Status{middleware.StatusUnknown, middleware.StatusHealthy, middleware.StatusUnhealthy}
	allModes  = []middleware.Mode{middleware.ModeLoop, middleware.ModeProbe, middleware.ModeAuto}
)

// NewCollector returns a Collector of mon's state; register it with the
// registry the Observer uses. Only opts.ConstLabels is used.
func NewCollector(mon *middleware.Monitor, opts Opts) *Collector {
	name := func(n string) string { return prometheus.BuildFQName(Namespace, "", n) }
	cl := opts.ConstLabels
	return &Collector{
		mon: mon,
		state: prometheus.NewDesc(name("state"),
			"The health state: 1 for the current one (unknown, healthy or unhealthy), 0 for the others.", []string{"state"}, cl),
		failures: prometheus.NewDesc(name("consecutive_failures"),
			"Recorded failed checks since the last pass.", nil, cl),
		since: prometheus.NewDesc(name("state_since_timestamp_seconds"),
			"When the state last changed, as Unix time; absent while it never has.", nil, cl),
		lastCheck: prometheus.NewDesc(name("last_check_timestamp_seconds"),
			"When the last recorded check ended, as Unix time; absent before the first.", nil, cl),
		mode: prometheus.NewDesc(name("mode"),
			"Who drives the checks: 1 for the monitor's mode (loop, probe or auto), 0 for the others.", []string{"mode"}, cl),
		stale: prometheus.NewDesc(name("stale"),
			"1 while the loop is more than a period late with the result it owes (a hung check): the state is then stale.", nil, cl),
		healing: prometheus.NewDesc(name("heal_in_progress"),
			"1 while a heal runs, 0 otherwise.", nil, cl),
		healStart: prometheus.NewDesc(name("heal_started_timestamp_seconds"),
			"When the running heal started, as Unix time; absent while none runs.", nil, cl),
		dueBy: prometheus.NewDesc(name("loop_due_timestamp_seconds"),
			"When the loop owes its next result, as Unix time; absent while no loop runs.", nil, cl),
		probeInfo: prometheus.NewDesc(name("light_probe_info"),
			"1, naming the light probe in use by its kind and target; absent without one.", []string{"kind", "target"}, cl),
		probeLoss: prometheus.NewDesc(name("light_probe_loss_ratio"),
			"Share of the light probes that ended over the loss window unanswered; absent before one ended.", []string{"kind", "target"}, cl),
		pathMTU: prometheus.NewDesc(name("light_probe_path_mtu_bytes"),
			"The largest IP packet a probe of the path MTU got an answer for over the loss window, 0 when none did; absent without such probes.", []string{"kind", "target"}, cl),
		mtuBlackHole: prometheus.NewDesc(name("light_probe_mtu_black_hole"),
			"1 while probes of the tunnel interface's full MTU have been lost for a window although small probes were answered; absent without such probes.", []string{"kind", "target"}, cl),
		probeSilent: prometheus.NewDesc(name("light_probe_silent"),
			"1 while a light probe's target has not answered for a window (or since the tunnel's last restart): with the state healthy, a target silent while the tunnel works.", []string{"kind", "target"}, cl),
		countersReadable: prometheus.NewDesc(name("evidence_counters_readable"),
			"1 when the last reading of the tunnel's traffic counters succeeded, 0 when it failed (no such interface, yet); absent without counters.", nil, cl),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.state, c.failures, c.since, c.lastCheck, c.mode, c.stale, c.healing, c.healStart, c.dueBy, c.probeInfo, c.probeLoss, c.countersReadable, c.pathMTU, c.mtuBlackHole, c.probeSilent} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.mon.Snapshot()
	for _, st := range allStatus {
		ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, oneIf(st == s.Status), st.String())
	}
	ch <- prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, float64(s.ConsecutiveFailures))
	if !s.Since.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.since, prometheus.GaugeValue, unixSeconds(s.Since))
	}
	if s.Last != nil {
		ch <- prometheus.MustNewConstMetric(c.lastCheck, prometheus.GaugeValue, unixSeconds(s.Last.Start.Add(s.Last.Duration)))
	}
	ch <- prometheus.MustNewConstMetric(c.stale, prometheus.GaugeValue, oneIf(s.Stale))
	ch <- prometheus.MustNewConstMetric(c.healing, prometheus.GaugeValue, oneIf(s.Healing != nil))
	if s.Healing != nil {
		ch <- prometheus.MustNewConstMetric(c.healStart, prometheus.GaugeValue, unixSeconds(s.Healing.Time))
	}
	if !s.DueBy.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.dueBy, prometheus.GaugeValue, unixSeconds(s.DueBy))
	}
	for _, p := range c.mon.LightProbeStats() {
		ch <- prometheus.MustNewConstMetric(c.probeInfo, prometheus.GaugeValue, 1, p.Kind, p.Target)
		ch <- prometheus.MustNewConstMetric(c.probeSilent, prometheus.GaugeValue, oneIf(p.Silent), p.Kind, p.Target)
		if p.Sent > 0 {
			ch <- prometheus.MustNewConstMetric(c.probeLoss, prometheus.GaugeValue, p.Loss, p.Kind, p.Target)
		}
		if p.PathMTU.MTU > 0 {
			ch <- prometheus.MustNewConstMetric(c.pathMTU, prometheus.GaugeValue, float64(p.PathMTU.Largest), p.Kind, p.Target)
			ch <- prometheus.MustNewConstMetric(c.mtuBlackHole, prometheus.GaugeValue, oneIf(p.PathMTU.BlackHole != nil), p.Kind, p.Target)
		}
	}
	if _, ok, err := c.mon.TrafficCounters(); ok {
		ch <- prometheus.MustNewConstMetric(c.countersReadable, prometheus.GaugeValue, oneIf(err == nil))
	}
	mode := c.mon.Mode()
	for _, m := range allModes {
		ch <- prometheus.MustNewConstMetric(c.mode, prometheus.GaugeValue, oneIf(m == mode), m.String())
	}
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds is t as Unix time in seconds, whole seconds and fraction
// converted apart so that round instants stay exact.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
