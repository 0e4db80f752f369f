package loadgen

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// rampLag is how late the ramp may launch a dial before it counts as
// behind its schedule: about one scheduling round of a busy machine, so
// that a timer that fires a little late does not stop the traffic.
const rampLag = 10 * time.Millisecond

// testHookParked, when set by a test, is called each time a greedy flow
// parks at a shut gate.
var testHookParked func()

// rampGate is where greedy flows yield the CPU to a ramp that is behind its
// schedule. Thousands of greedy writers and readers keep both cores busy,
// and the ramp's dials, like every goroutine, wait their turn behind them:
// the ramp then opens a tenth of its connect rate or less. While the gate
// is shut, each greedy flow parks before its next read or write, so that
// the dials get the machine; it opens once the ramp has caught up, or
// its last dials have stopped ending (see waitLastDials), and for good
// when the ramp is over. Paced flows do not stop: their rate is
// the experiment.
//
// The zero value is an open gate. It is safe for concurrent use.
type rampGate struct {
	shut atomic.Bool // read before every greedy read or write: cheap
	mu   sync.Mutex
	// opened is closed when the gate opens; a new one is made when it
	// shuts. Guarded by mu.
	opened chan struct{}
}

// set shuts the gate when behind, opens it otherwise.
func (g *rampGate) set(behind bool) {
	if g.shut.Load() == behind {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut.Load() == behind {
		return
	}
	if behind {
		g.opened = make(chan struct{})
	} else {
		close(g.opened)
	}
	g.shut.Store(behind)
}

// wait returns at once while the gate is open; while it is shut, it parks
// until the gate opens or ctx ends. It reports whether ctx is still live.
func (g *rampGate) wait(ctx context.Context) bool {
	if !g.shut.Load() {
		return true
	}
	g.mu.Lock()
	opened := g.opened
	shut := g.shut.Load()
	g.mu.Unlock()
	if !shut {
		return true
	}
	if h := testHookParked; h != nil {
		h()
	}
	select {
	case <-opened:
		return true
	case <-ctx.Done():
		return false
	}
}

// gatedWriter passes writes to w once g is open; while ctx ends with the
// gate shut, it writes nothing and returns errStopped.
type gatedWriter struct {
	ctx context.Context
	g   *rampGate
	w   io.Writer
}

func (gw gatedWriter) Write(p []byte) (int, error) {
	if !gw.g.wait(gw.ctx) {
		return 0, errStopped
	}
	return gw.w.Write(p)
}
