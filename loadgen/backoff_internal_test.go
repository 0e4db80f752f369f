package loadgen

import "testing"

func TestBackoff(t *testing.T) {
	var b backoff
	step := minBackoff
	for i := range 10 {
		d := b.next()
		if d < step/2 || d > step {
			t.Errorf("wait %d = %v, want within [%v, %v]", i, d, step/2, step)
		}
		step = min(2*step, maxBackoff)
	}
	b.reset()
	if d := b.next(); d > minBackoff {
		t.Errorf("after reset: %v, want at most %v", d, minBackoff)
	}
}
