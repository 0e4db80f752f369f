package harness

import (
	"testing"
	"time"
)

func TestBuffersFor(t *testing.T) {
	for _, c := range []struct {
		name    string
		r       Rate
		conns   int
		sendMax int
	}{
		{"unlimited", 0, 2000, ManyFlowsBuffers.SendMax},
		{"no load", 20_000_000, 0, ManyFlowsBuffers.SendMax},
		{"one flow keeps the ceiling", 20_000_000, 1, ManyFlowsBuffers.SendMax},
		{"ten flows", 20_000_000, 10, 135_000}, // 2 x 2 Mbit/s x 270 ms
		{"2,000 flows get the floor", 20_000_000, 2000, MinSendBuffer},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := BuffersFor(c.r, 10*time.Millisecond, c.conns)
			if b.SendMax != c.sendMax || b.SendDefault > b.SendMax {
				t.Errorf("send default %d, max %d; want max %d, default no larger", b.SendDefault, b.SendMax, c.sendMax)
			}
			if b.ReceiveDefault != ManyFlowsBuffers.ReceiveDefault || b.ReceiveMax != ManyFlowsBuffers.ReceiveMax {
				t.Errorf("receive buffers %d, %d changed", b.ReceiveDefault, b.ReceiveMax)
			}
		})
	}
}
