package harness

import "testing"

func TestHeldPacketsWaitsForAPacketOut(t *testing.T) {
	h := newHeldPackets()
	h.in(maxHeld - 1)
	h.wait() // below the bound: returns at once
	h.in(1)
	done := make(chan struct{})
	go func() {
		h.wait()
		close(done)
	}()
	h.out(1)
	<-done
	if n := h.n.Load(); n != maxHeld-1 {
		t.Errorf("held %d, want %d", n, maxHeld-1)
	}
	h.out(2 * maxHeld) // WireGuard's own packets: no count below zero
	if n := h.n.Load(); n != 0 {
		t.Errorf("held %d after more out than in, want 0", n)
	}
}

// Packets WireGuard dropped never come out: the reader must not wait for
// them for ever.
func TestHeldPacketsForgetsPacketsThatNeverComeOut(t *testing.T) {
	h := newHeldPackets()
	h.in(maxHeld)
	h.wait()
	if n := h.n.Load(); n != 0 {
		t.Errorf("held %d after the reader gave up on them, want 0", n)
	}
	var none *heldPackets // a kernel device's: no bound
	none.in(maxHeld)
	none.wait()
	none.out(1)
}

// WireGuard counts its queues' limits in batches of the device's batch
// size, each packet in a 64 KiB buffer: a peer without a session stages
// 128 batches, which must stay 128 packets (8 MiB), not 128 x 16.
func TestNetstackHandsWireGuardOnePacketARead(t *testing.T) {
	var tun netTUN
	if n := tun.BatchSize(); n != 1 {
		t.Errorf("BatchSize %d, want 1", n)
	}
}
