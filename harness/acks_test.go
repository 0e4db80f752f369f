package harness

import (
	"testing"
	"time"
)

// The client's delivery follows what the far end acknowledged of what it
// sent: an upload to the sink grows; with the uplink down, the upload's
// data never arrives and nothing grows, whatever the far side still sends
// (its retransmitted acknowledgements of what it had).
func TestClientDeliveryFollowsTheFarEndsAcknowledgements(t *testing.T) {
	l := startLab(t, Config{})
	up, err := l.DialContext(t.Context(), "tcp", l.SinkAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	if _, err := up.Write(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	// Read until the far end's acknowledgement is seen: the sink counts
	// what it received, and the ACK follows.
	before := readUntil(t, l, func(d map[uint64]uint64) bool { return len(d) >= 1 && anyAtLeast(d, 4096) })
	if _, err := up.Write(make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	// All of it acknowledged: nothing of the client's is in flight.
	readUntil(t, l, func(d map[uint64]uint64) bool { return grew(before, d) == 1 && anyAtLeast(d, 4096+64<<10) })

	// The uplink goes down: what the client sends never arrives.
	if err := l.Link().Update(func(s *Settings) { s.UplinkDown = true }); err != nil {
		t.Fatal(err)
	}
	cut, err := l.ReadDelivery()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _, _ = up.Write(make([]byte, 64<<10)) }()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		d, err := l.ReadDelivery()
		if err != nil {
			t.Fatal(err)
		}
		if n := grew(cut, d); n != 0 {
			t.Fatalf("%d connection(s) grew with the uplink down", n)
		}
	}
	up.Close()
	<-done
}

func readUntil(t *testing.T, l *Lab, ok func(map[uint64]uint64) bool) map[uint64]uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := l.ReadDelivery()
		if err != nil {
			t.Fatal(err)
		}
		if ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %v never became what the test waits for", d)
		}
	}
}

func anyAtLeast(d map[uint64]uint64, n uint64) bool {
	for _, v := range d {
		if v >= n {
			return true
		}
	}
	return false
}

// grew counts the connections of after whose value is above before's.
func grew(before, after map[uint64]uint64) int {
	n := 0
	for k, v := range after {
		if b, ok := before[k]; ok && v > b {
			n++
		}
	}
	return n
}
