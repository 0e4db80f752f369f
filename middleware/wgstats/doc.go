// Package wgstats reads a WireGuard device through wgctrl, kernel or
// userspace (wireguard-go's UAPI socket): its traffic counters, a
// middleware.CounterSource for proof of life (Config.Evidence), and each
// peer's last handshake, which it exports as Prometheus metrics. It lives
// apart from package middleware so that the middleware does not pull in
// wgctrl and netlink.
//
// The counters are the sums over the device's peers of wgctrl's received
// and transmitted bytes, which count WireGuard's own handshakes and
// keepalives too: a peer with PersistentKeepalive sends them whether or not
// it hears us. Like every counter, they never prove a tunnel alive (see
// middleware.Evidence); only the light probe's answers do.
//
// Every read is bounded by Device.Timeout, so a frozen userspace device
// (wireguard-go's UAPI socket accepting and never answering) fails reads
// instead of blocking sampling, scrapes and shutdown.
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
