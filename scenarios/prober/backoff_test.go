package prober

import (
	"testing"
	"time"
)

// The first restart is immediate; later ones wait 10 s, doubling, capped at
// 300 s, counted from the exit.
func TestCrashBackoffSequence(t *testing.T) {
	t.Parallel()
	var b CrashBackoff
	exit := t0
	var got []time.Duration
	for range 9 {
		d := b.Next(exit)
		got = append(got, d)
		exit = exit.Add(d + 30*time.Second) // runs 30 s, then fails again
	}
	wantEqual(t, "delays", got, secs(0, 10, 20, 40, 80, 160, 300, 300, 300))
}

// The back-off starts over once the container ran more than 10 minutes
// (twice the cap) since its last restart.
func TestCrashBackoffReset(t *testing.T) {
	t.Parallel()
	var b CrashBackoff
	b.Next(t0)                                            // restart at 0 s
	d := b.Next(t0.Add(time.Minute))                      // waits 10 s: restart at 70 s
	d2 := b.Next(t0.Add(70*time.Second + 10*time.Minute)) // ran exactly 10 min: not reset
	d3 := b.Next(t0.Add(2 * time.Hour))                   // ran well over 10 min: reset
	d4 := b.Next(t0.Add(2*time.Hour + time.Second))
	wantEqual(t, "delays", []time.Duration{d, d2, d3, d4}, secs(10, 20, 0, 10))

	b.Reset()
	if d := b.Next(t0.Add(3 * time.Hour)); d != 0 {
		t.Errorf("after Reset: %v, want an immediate restart", d)
	}
}

func TestCrashBackoffCustom(t *testing.T) {
	t.Parallel()
	b := CrashBackoff{Initial: time.Second, Max: 3 * time.Second}
	var got []time.Duration
	for i := range 5 {
		got = append(got, b.Next(t0.Add(time.Duration(i)*time.Second)))
	}
	wantEqual(t, "delays", got, secs(0, 1, 2, 3, 3))
}

// The kill uses the probe's terminationGracePeriodSeconds if set, else the
// pod's, never below 2 s.
func TestGracePeriod(t *testing.T) {
	t.Parallel()
	tests := []struct{ probe, pod, want time.Duration }{
		{0, DefaultPodGracePeriod, 30 * time.Second},
		{5 * time.Second, DefaultPodGracePeriod, 5 * time.Second},
		{0, 0, 2 * time.Second},
		{time.Second, 60 * time.Second, 2 * time.Second},
		{0, 90 * time.Second, 90 * time.Second},
	}
	for _, tt := range tests {
		if got := GracePeriod(tt.probe, tt.pod); got != tt.want {
			t.Errorf("GracePeriod(%v, %v) = %v, want %v", tt.probe, tt.pod, got, tt.want)
		}
	}
}
