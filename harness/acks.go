package harness

import (
	"sync"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip/header"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// ackTracker follows, for each TCP connection of the client's netstack,
// how far the far end has acknowledged what the client sent: the
// acknowledgement numbers of the segments that come out of the tunnel to
// the client, as a netstack has no kernel socket table to read. What the
// lab's link carried is not looked at: only what the client side itself
// received, as a VPN client's own kernel would see it.
type ackTracker struct {
	mu    sync.Mutex
	flows map[uint64]*ackFlow
}

type ackFlow struct {
	last  uint32    // the highest acknowledgement number seen
	acked uint64    // how far it advanced since the first, unwrapped
	seen  time.Time // when a segment of the flow last came
}

// ackIdle is how long a connection with no segment is kept: past it, a
// connection that ended without a FIN or RST seen is forgotten.
const ackIdle = 2 * time.Minute

func newAckTracker() *ackTracker { return &ackTracker{flows: map[uint64]*ackFlow{}} }

// inbound looks at one IP packet delivered to the client.
func (a *ackTracker) inbound(p []byte, now time.Time) {
	var remote, local []byte
	var tcp header.TCP
	switch p[0] >> 4 {
	case 4:
		ip := header.IPv4(p)
		if !ip.IsValid(len(p)) || ip.TransportProtocol() != header.TCPProtocolNumber || ip.FragmentOffset() != 0 {
			return
		}
		remote, local, tcp = ip.SourceAddressSlice(), ip.DestinationAddressSlice(), header.TCP(ip.Payload())
	case 6:
		ip := header.IPv6(p)
		if !ip.IsValid(len(p)) || ip.TransportProtocol() != header.TCPProtocolNumber {
			return
		}
		remote, local, tcp = ip.SourceAddressSlice(), ip.DestinationAddressSlice(), header.TCP(ip.Payload())
	default:
		return
	}
	if len(tcp) < header.TCPMinimumSize {
		return
	}
	key := flowKey(remote, local, tcp.SourcePort(), tcp.DestinationPort())
	flags := tcp.Flags()
	a.mu.Lock()
	defer a.mu.Unlock()
	if flags.Contains(header.TCPFlagRst) {
		delete(a.flows, key)
		return
	}
	if !flags.Contains(header.TCPFlagAck) {
		return
	}
	ack := tcp.AckNumber()
	f := a.flows[key]
	if f == nil {
		a.flows[key] = &ackFlow{last: ack, seen: now}
		return
	}
	f.seen = now
	// Only an acknowledgement past the last counts; an old or repeated
	// one (a retransmission of the far side's) does not.
	if d := ack - f.last; d != 0 && d < 1<<31 {
		f.acked += uint64(d)
		f.last = ack
	}
}

// delivery returns each connection's acknowledged amount, and forgets the
// connections idle for longer than ackIdle.
func (a *ackTracker) delivery(now time.Time) middleware.Delivery {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(middleware.Delivery, len(a.flows))
	for k, f := range a.flows {
		if now.Sub(f.seen) > ackIdle {
			delete(a.flows, k)
			continue
		}
		out[k] = f.acked
	}
	return out
}

// flowKey identifies a connection by its two ends: their FNV-1a hash,
// computed here rather than by hash/fnv, which allocates, for every packet.
func flowKey(remote, local []byte, remotePort, localPort uint16) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, part := range [][]byte{remote, local} {
		for _, b := range part {
			h = (h ^ uint64(b)) * prime
		}
	}
	for _, b := range [4]byte{byte(remotePort >> 8), byte(remotePort), byte(localPort >> 8), byte(localPort)} {
		h = (h ^ uint64(b)) * prime
	}
	return h
}
