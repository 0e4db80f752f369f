package harness

import (
	"testing"
	"time"
)

// WireGuard takes the keepalive in whole seconds: one asked for below a
// second is a second, never none.
func TestKeepaliveSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{{0, 0}, {-time.Second, 0}, {500 * time.Millisecond, 1}, {time.Second, 1}, {1500 * time.Millisecond, 2}, {25 * time.Second, 25}} {
		if got := keepaliveSeconds(tc.d); got != tc.want {
			t.Errorf("keepaliveSeconds(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}
