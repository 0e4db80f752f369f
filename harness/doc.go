// Package harness is the tunnel lab: a real WireGuard tunnel in user space
// over a link the project controls, so that health checks can be tried on
// a loaded, lossy or dead link without root or a kernel module.
//
// # Parts
//
//   - [Server]: a WireGuard peer (golang.zx2c4.com/wireguard) on a gVisor
//     netstack hosting a [TLSTarget] (HTTPS, certificate from a [CA]
//     generated at start) on [TLSPort], a discarding sink
//     ([github.com/tunnelprobe/tunnelprobe/loadgen/sink.Server]) on
//     [SinkPort], an echoing one on [EchoPort] and a DNS server for the
//     lab's names ([TLSHost], [SinkHost]) on [DNSPort]; its netstack
//     answers ICMP echo. [Server.Stream] sends a one-way UDP stream to the
//     client.
//   - [Link]: a UDP relay between the peers that carries their encrypted
//     packets through one FIFO queue per direction, shared by every flow,
//     with a serialisation rate, a one-way delay, a tail-drop queue limit in
//     bytes or packets, seeded random loss, an MTU past which packets are
//     dropped silently (an MTU black hole) and an outage switch, all
//     changeable while traffic flows ([Link.Update]), and counters
//     ([Link.Stats]). Shaping the underlay, not each connection, is what
//     makes a SYN or a TLS record wait behind thousands of other flows.
//   - [Client]: the client peer on its own netstack; [Client.DialContext] opens
//     connections inside the tunnel and [Client.Restart] takes the device
//     down and up again as a heal or a container restart would, aborting
//     every flow through it ([Client.Down] and [Client.Up] do it in two
//     steps). [Client.ReadCounters] counts what crosses its tunnel.
//   - [SOCKS5]: a CONNECT-only SOCKS5 server that lets other processes
//     (the load generator, curl) use the client's netstack.
//   - [ControlHandler]: the HTTP control API (GET and PUT /link, POST
//     /restart).
//   - [Lab] composes all of them in one process; the `tunnelprobe lab`
//     sub-roles run [Server], [Link] and [Client] as separate processes.
//   - [OpenVPN] is the same lab on the real openvpn (a [Tunnel] of another
//     kind): client and server on kernel tun0 devices in network
//     namespaces it creates (root), the server's targets on kernel
//     sockets there, its transport over UDP or TCP through the same
//     [Link]; its restarts are process restarts.
//
// In-tunnel addresses ([ServerTunnelAddr], [ClientTunnelAddr]) exist only
// inside the netstacks; the peers and the link bind 127.0.0.1 unless told
// otherwise, so no traffic leaves the machine.
//
// # Concurrency and ownership
//
// Constructors ([New], [NewServer], [NewClient], [NewLink]) start nothing.
// Start opens sockets and starts goroutines; the matching Close stops them
// and waits for every one of them, so after Close nothing of the part is
// left running. The ctx of a Start bounds the start only: once it is done,
// Start starts nothing more and returns its error, while a part already
// started runs until Close. The caller must Close everything it started, including
// when Start of a later part failed; [Lab.Start] cleans up after itself on
// error. Start and Close must not run concurrently with each other; every
// other method is safe for concurrent use, also while traffic flows.
//
// Goroutines: the link has one reader per socket and one pacer per
// direction; each sink, TLS target and SOCKS5 server has an accept loop
// and one goroutine per connection (two for a SOCKS5 connection); the DNS
// server has one. The
// WireGuard devices and gVisor stacks run their own workers, which
// Client.Close, Server.Close and Client.Restart wait for.
//
// Connections returned by [Client.DialContext] belong to the caller; they are
// aborted, not leaked, when the client peer is closed or restarted.
//
// # Timing
//
// The shaper computes departures in virtual time (each packet leaves the
// queue exactly size*8/rate after the previous one), so a pacer that wakes
// late delivers a small burst but never exceeds the configured rate.
//
// # Memory
//
// Each netstack's TCP buffers start small and auto-tune ([DefaultBuffers]):
// idle and slow flows cost little, so several labs with thousands of
// connections each fit in a few GiB.
package harness
