package wgstats

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.zx2c4.com/wireguard/wgctrl"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// DefaultTimeout bounds a read of a Device whose Timeout is zero: a
// userspace device answers its control socket in microseconds.
const DefaultTimeout = 2 * time.Second

// ErrNoAnswer is wrapped by the error of a read that timed out.
var ErrNoAnswer = errors.New("no answer from the device")

// A Device reads the WireGuard device Name. Its zero value but Name is
// ready to use; it opens its wgctrl client at the first read. Close it when
// done.
//
// Each read is bounded by Timeout: wgctrl reads a userspace device's UAPI
// socket with no deadline, so a frozen wireguard-go (its socket accepts and
// never answers) would block evidence sampling, scrapes and shutdown. A
// read runs in a goroutine of its own; callers wait for it up to Timeout,
// and while it hangs no other read starts: later callers wait for the same
// one, so a frozen device holds one goroutine, until its socket answers or
// closes, however often it is asked.
type Device struct {
	// Name is the device's interface name, e.g. wg0.
	Name string
	// Now is the clock of the handshake ages; nil means time.Now.
	Now func() time.Time
	// Timeout bounds each read. Zero means DefaultTimeout.
	Timeout time.Duration

	mu      sync.Mutex
	client  *wgctrl.Client
	reading *deviceRead // the read in flight; nil when none
}

// deviceRead is one read of the device; done is closed when it ended.
type deviceRead struct {
	done chan struct{}
	dev  *wgtypes.Device
	err  error
}

// Peer is one peer's state.
type Peer struct {
	PublicKey     string // base64
	LastHandshake time.Time
	ReceiveBytes  uint64
	TransmitBytes uint64
}

// Peers reads the device's peers.
func (d *Device) Peers() ([]Peer, error) {
	dev, err := d.read()
	if err != nil {
		return nil, err
	}
	peers := make([]Peer, len(dev.Peers))
	for i, p := range dev.Peers {
		peers[i] = Peer{PublicKey: p.PublicKey.String(), LastHandshake: p.LastHandshakeTime,
			ReceiveBytes: uint64(max(p.ReceiveBytes, 0)), TransmitBytes: uint64(max(p.TransmitBytes, 0))}
	}
	return peers, nil
}

// ReadCounters returns the sums of the peers' byte counters: a
// middleware.CounterSource. Packets are not counted.
func (d *Device) ReadCounters() (middleware.Counters, error) {
	peers, err := d.Peers()
	if err != nil {
		return middleware.Counters{}, err
	}
	var c middleware.Counters
	for _, p := range peers {
		c.RxBytes += p.ReceiveBytes
		c.TxBytes += p.TransmitBytes
	}
	return c, nil
}

func (d *Device) read() (*wgtypes.Device, error) {
	d.mu.Lock()
	r := d.reading
	if r == nil {
		if d.client == nil {
			c, err := wgctrl.New()
			if err != nil {
				d.mu.Unlock()
				return nil, fmt.Errorf("wireguard %s: %w", d.Name, err)
			}
			d.client = c
		}
		r = &deviceRead{done: make(chan struct{})}
		d.reading = r
		go d.fetch(d.client, r)
	}
	d.mu.Unlock()
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-r.done:
		if r.err != nil {
			return nil, fmt.Errorf("wireguard %s: %w", d.Name, r.err)
		}
		return r.dev, nil
	case <-timer.C:
		return nil, fmt.Errorf("wireguard %s: %w within %v: its control socket may be frozen", d.Name, ErrNoAnswer, timeout)
	}
}

// fetch reads the device with client into r, then lets the next read
// start.
func (d *Device) fetch(client *wgctrl.Client, r *deviceRead) {
	r.dev, r.err = client.Device(d.Name)
	d.mu.Lock()
	if d.reading == r {
		d.reading = nil
	}
	d.mu.Unlock()
	close(r.done)
}

// Close closes the wgctrl client, if one was opened. It does not wait for
// a read that hangs (see Device).
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.client == nil {
		return nil
	}
	err := d.client.Close()
	d.client = nil
	return err
}

var (
	labels        = []string{"device", "peer"}
	handshakeDesc = prometheus.NewDesc("tunnelprobe_wireguard_peer_last_handshake_timestamp_seconds",
		"The peer's last handshake, Unix time; absent before the first.", labels, nil)
	ageDesc = prometheus.NewDesc("tunnelprobe_wireguard_peer_handshake_age_seconds",
		"Seconds since the peer's last handshake; a working peer rekeys every 2 minutes while traffic flows.", labels, nil)
	rxDesc = prometheus.NewDesc("tunnelprobe_wireguard_peer_received_bytes_total", "Bytes received from the peer.", labels, nil)
	txDesc = prometheus.NewDesc("tunnelprobe_wireguard_peer_sent_bytes_total", "Bytes sent to the peer.", labels, nil)
)

// Describe implements prometheus.Collector.
func (d *Device) Describe(ch chan<- *prometheus.Desc) {
	for _, desc := range []*prometheus.Desc{handshakeDesc, ageDesc, rxDesc, txDesc} {
		ch <- desc
	}
}

// Collect implements prometheus.Collector. A device that cannot be read
// yields no metrics in that scrape.
func (d *Device) Collect(ch chan<- prometheus.Metric) {
	peers, err := d.Peers()
	if err != nil {
		return
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	for _, p := range peers {
		if !p.LastHandshake.IsZero() {
			ch <- prometheus.MustNewConstMetric(handshakeDesc, prometheus.GaugeValue, float64(p.LastHandshake.UnixNano())/1e9, d.Name, p.PublicKey)
			ch <- prometheus.MustNewConstMetric(ageDesc, prometheus.GaugeValue, now().Sub(p.LastHandshake).Seconds(), d.Name, p.PublicKey)
		}
		ch <- prometheus.MustNewConstMetric(rxDesc, prometheus.CounterValue, float64(p.ReceiveBytes), d.Name, p.PublicKey)
		ch <- prometheus.MustNewConstMetric(txDesc, prometheus.CounterValue, float64(p.TransmitBytes), d.Name, p.PublicKey)
	}
}
