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
// parks at a shut gate, or a new one is held there before it starts.
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
	// held are the starts whenOpen keeps while the gate is shut, run when
	// it opens. Guarded by mu.
	held []func()
}

// set shuts the gate when behind, opens it otherwise.
func (g *rampGate) set(behind bool) {
	if g.shut.Load() == behind {
		return
	}
	g.mu.Lock()
	if g.shut.Load() == behind {
		g.mu.Unlock()
		return
	}
	if behind {
		g.opened = make(chan struct{})
		g.shut.Store(true)
		g.mu.Unlock()
		return
	}
	close(g.opened)
	g.shut.Store(false)
	held := g.held
	g.held = nil
	g.mu.Unlock()
	for _, start := range held {
		start()
	}
}

// whenOpen runs start at once while the gate is open; while it is shut, it
// keeps start and runs it when the gate opens, on the goroutine that opens
// it. A ramp as fast as possible starts its greedy flows' goroutines this
// way, so that a connection waits for the ramp's end with no goroutine of
// its own: a goroutine costs a stack and a scheduling round per
// connection, which the plain dial loop never pays (one per connection,
// parked, took 15-25% of ci/connref's connect rate to a sink).
func (g *rampGate) whenOpen(start func()) {
	if g.shut.Load() {
		g.mu.Lock()
		if g.shut.Load() {
			g.held = append(g.held, start)
			g.mu.Unlock()
			if h := testHookParked; h != nil {
				h()
			}
			return
		}
		g.mu.Unlock()
	}
	start()
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
