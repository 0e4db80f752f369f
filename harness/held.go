package harness

import (
	"sync/atomic"
	"time"
)

// WireGuard holds each packet in flight through it in a buffer of 64 KiB
// (device.MaxMessageSize, a constant), whatever the packet's size, and
// its queues take thousands of packets in each direction: when the CPU is
// short, as with seven loaded labs on two cores, the packets in flight
// through the devices alone held gigabytes. A heldPackets bounds one
// direction of a netstack peer to maxHeld packets in flight through
// WireGuard: its reader (netTUN.Read for the stack's packets, udpBind's
// receive function for the link's) waits while maxHeld are in, and the
// packets' exit (udpBind.Send, netTUN.Write) lets them out. What waits
// stays where it came from, in the netstack's queue or the UDP socket's,
// which drop beyond their limits as a device's queue does. 32 (held
// 4 MiB a device) still let the default suite's load reach 84-86% of the
// link on a quiet machine, as 128 did (docs/scenarios.md, "What a run
// takes"), and took 250-300 MB off its peak heap.
const maxHeld = 32

// heldStuck is how long a reader waits for a packet to come out before it
// counts the held ones as gone: WireGuard drops some without a word (a
// queue full while no session is up, a handshake message, a keepalive),
// and those are never let out.
const heldStuck = 100 * time.Millisecond

// heldPackets counts the packets of one direction in WireGuard. Each
// direction has one reader, the only caller of wait.
type heldPackets struct {
	n     atomic.Int64
	freed chan struct{} // capacity 1: "some came out, look again"
	timer *time.Timer   // the reader's
}

func newHeldPackets() *heldPackets {
	return &heldPackets{freed: make(chan struct{}, 1)}
}

// wait returns once fewer than maxHeld packets are held, or when none has
// come out for heldStuck, which forgets the ones held. A nil h never
// waits.
func (h *heldPackets) wait() {
	if h == nil {
		return
	}
	for h.n.Load() >= maxHeld {
		if h.timer == nil {
			h.timer = time.NewTimer(heldStuck)
		} else {
			h.timer.Reset(heldStuck)
		}
		select {
		case <-h.freed:
			h.timer.Stop()
		case <-h.timer.C:
			h.n.Store(0)
		}
	}
}

// in counts n packets taken into WireGuard.
func (h *heldPackets) in(n int) {
	if h != nil {
		h.n.Add(int64(n))
	}
}

// out counts n packets out of WireGuard; more out than in (the packets
// WireGuard makes itself) count as none.
func (h *heldPackets) out(n int) {
	if h == nil {
		return
	}
	for {
		v := h.n.Load()
		if h.n.CompareAndSwap(v, max(0, v-int64(n))) {
			break
		}
	}
	select {
	case h.freed <- struct{}{}:
	default:
	}
}
