// Package wgstats reads a WireGuard device through wgctrl, kernel or
// userspace (wireguard-go's UAPI socket): its traffic counters, a
// middleware.CounterSource for traffic evidence, and each peer's last
// handshake, which it exports as Prometheus metrics. It lives apart from
// package middleware so that the middleware does not pull in wgctrl and
// netlink.
//
// The counters are the sums over the device's peers of wgctrl's received
// and transmitted bytes, which count WireGuard's own handshakes and
// keepalives too: a peer's keepalive proves the peer answers, not that
// traffic beyond it flows. For traffic evidence that counts only what goes
// through the tunnel, read the device's interface instead
// (middleware.InterfaceCounters), or raise Evidence.MinReceivedBytes above a
// keepalive's 32 bytes.
//
// # Metrics
//
// A *Device is a prometheus.Collector; each scrape reads the device once:
//
//	tunnelprobe_wireguard_peer_last_handshake_timestamp_seconds{device,peer}  gauge: the peer's last handshake (Unix time); absent before the first
//	tunnelprobe_wireguard_peer_handshake_age_seconds{device,peer}             gauge: seconds since then; a working peer rekeys every 2 minutes while traffic flows
//	tunnelprobe_wireguard_peer_received_bytes_total{device,peer}              counter: bytes received from the peer
//	tunnelprobe_wireguard_peer_sent_bytes_total{device,peer}                  counter: bytes sent to the peer
//
// peer is the peer's public key in base64.
package wgstats
