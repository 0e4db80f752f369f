package prober

import "time"

// The kubelet's restart timing.
const (
	// DefaultCrashBackoffInitial is the first crash back-off delay
	// (the kubelet's backOffPeriod).
	DefaultCrashBackoffInitial = 10 * time.Second
	// DefaultCrashBackoffMax caps the delay (MaxContainerBackOff).
	DefaultCrashBackoffMax = 300 * time.Second
	// MinGracePeriod is the shortest grace period a kill gives a container
	// (minimumGracePeriodInSeconds).
	MinGracePeriod = 2 * time.Second
	// DefaultPodGracePeriod is the pod's terminationGracePeriodSeconds when
	// its spec sets none.
	DefaultPodGracePeriod = 30 * time.Second
)

// CrashBackoff computes when the kubelet starts a container again after it
// exited, as its crash-loop back-off (kuberuntime's doBackOff over
// client-go's flowcontrol.Backoff, without jitter, which the kubelet does not
// use):
//
//   - The first restart is immediate: there is no back-off before it.
//   - Each later restart waits, counted from when the container exited,
//     10 s, then 20 s, 40 s and so on, capped at 300 s.
//   - When the container ran for more than twice the cap (10 minutes) since
//     its last restart before exiting, the back-off starts over: an
//     immediate restart, then 10 s.
//
// The real kubelet starts the container at the first pod sync after the
// delay has passed, so its restarts land a little later than these times.
// The zero value is ready to use with the defaults. A CrashBackoff is not
// safe for concurrent use.
type CrashBackoff struct {
	// Initial is the first delay; 10 s when zero.
	Initial time.Duration
	// Max caps the delay; 300 s when zero.
	Max time.Duration

	backoff    time.Duration // the current delay, 0 before the first restart
	lastUpdate time.Time     // when the container was last started again
}

// Next records that the container exited at finishedAt and returns how long
// after that it starts again. It assumes the restart happens then: call it
// once per exit, in order.
func (b *CrashBackoff) Next(finishedAt time.Time) time.Duration {
	initial, maxDelay := b.Initial, b.Max
	if initial <= 0 {
		initial = DefaultCrashBackoffInitial
	}
	if maxDelay <= 0 {
		maxDelay = DefaultCrashBackoffMax
	}
	var delay time.Duration
	if b.backoff == 0 || finishedAt.Sub(b.lastUpdate) > 2*maxDelay {
		// No entry, or an expired one: start at once and arm the first
		// delay for the next exit.
		b.backoff = initial
	} else {
		delay = b.backoff
		b.backoff = min(2*b.backoff, maxDelay)
	}
	b.lastUpdate = finishedAt.Add(delay)
	return delay
}

// Reset forgets every restart, as when the pod is deleted.
func (b *CrashBackoff) Reset() { b.backoff, b.lastUpdate = 0, time.Time{} }

// GracePeriod returns the grace period the kubelet gives a container it kills
// after a failed liveness or startup probe: the probe's
// terminationGracePeriodSeconds when set (probe > 0), else the pod's (pod;
// pass DefaultPodGracePeriod when the pod sets none), and never less than
// MinGracePeriod. The kubelet sends SIGTERM, waits that long, then SIGKILL.
func GracePeriod(probe, pod time.Duration) time.Duration {
	d := pod
	if probe > 0 {
		d = probe
	}
	return max(d, MinGracePeriod)
}
