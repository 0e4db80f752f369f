package pace

import (
	"context"
	"testing"
	"time"
)

func TestScheduleNeverSlips(t *testing.T) {
	start := time.Unix(1000, 0)
	s := New(start, 100_000) // 100 kB/s: a 2 kB quantum
	if n, wait := s.Next(start); n != 0 || wait != 20*time.Millisecond {
		t.Fatalf("at start: %d bytes, wait %v; want 0, 20ms", n, wait)
	}
	// On time: one quantum every 20 ms.
	at := start.Add(20 * time.Millisecond)
	if n, _ := s.Next(at); n != 2000 {
		t.Fatalf("after 20 ms: %d bytes, want 2000", n)
	}
	s.Sent(2000)
	if n, wait := s.Next(at); n != 0 || wait != 20*time.Millisecond {
		t.Fatalf("just after sending: %d, %v", n, wait)
	}
	// A write blocked for a second: everything due since is owed, in
	// writes of at most MaxQuantum.
	at = start.Add(time.Second + 20*time.Millisecond)
	if got := s.Behind(at); got != 100_000 {
		t.Errorf("Behind = %d, want 100000", got)
	}
	var sent int64
	for {
		n, _ := s.Next(at)
		if n == 0 {
			break
		}
		if n > MaxQuantum {
			t.Fatalf("write of %d bytes", n)
		}
		s.Sent(n)
		sent += n
	}
	// What is left is less than a quantum, which waits for more.
	if b := s.Behind(at); sent+b != 100_000 || b >= 2000 {
		t.Errorf("caught up %d bytes, behind %d; want 100000 in all, less than a quantum behind", sent, b)
	}
}

func TestQuantumBounds(t *testing.T) {
	if q := New(time.Now(), 1).quantum; q != MinQuantum {
		t.Errorf("slow quantum %d, want %d", q, MinQuantum)
	}
	if q := New(time.Now(), 1e10).quantum; q != MaxQuantum {
		t.Errorf("fast quantum %d, want %d", q, MaxQuantum)
	}
}

func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("Sleep with a live context reported it ended")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep with an ended context reported it live")
	}
}
