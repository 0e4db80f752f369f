package prom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// TunnelCollector exports a tunnel's traffic counters, read from its
// source at each scrape. Create it with [NewTunnelCollector].
type TunnelCollector struct {
	src                              middleware.CounterSource
	rxBytes, txBytes, rxPkts, txPkts *prometheus.Desc
}

// NewTunnelCollector returns a collector of src's counters. A scrape reads
// src once; a read that fails yields no tunnel metrics in that scrape.
func NewTunnelCollector(src middleware.CounterSource, opts Opts) *TunnelCollector {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "tunnel", name), help, nil, opts.ConstLabels)
	}
	return &TunnelCollector{
		src:     src,
		rxBytes: desc("received_bytes_total", "Bytes the tunnel received, as its counter source reports them."),
		txBytes: desc("sent_bytes_total", "Bytes the tunnel sent, as its counter source reports them."),
		rxPkts:  desc("received_packets_total", "Packets the tunnel received; absent for a source that counts bytes only."),
		txPkts:  desc("sent_packets_total", "Packets the tunnel sent; absent for a source that counts bytes only."),
	}
}

// Describe implements prometheus.Collector.
func (c *TunnelCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.rxBytes, c.txBytes, c.rxPkts, c.txPkts} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *TunnelCollector) Collect(ch chan<- prometheus.Metric) {
	n, err := c.src.ReadCounters()
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.rxBytes, prometheus.CounterValue, float64(n.RxBytes))
	ch <- prometheus.MustNewConstMetric(c.txBytes, prometheus.CounterValue, float64(n.TxBytes))
	if n.RxPackets > 0 || n.TxPackets > 0 {
		ch <- prometheus.MustNewConstMetric(c.rxPkts, prometheus.CounterValue, float64(n.RxPackets))
		ch <- prometheus.MustNewConstMetric(c.txPkts, prometheus.CounterValue, float64(n.TxPackets))
	}
}
