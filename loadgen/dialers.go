package loadgen

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// dialers runs a run's dials on a fixed set of goroutines that live as
// long as the load, as a plain dial loop does: at most that many dials are
// in progress at any moment.
//
// A dial runs deep (resolver, socket options, poller registration) and
// grows its goroutine's stack to 8 KiB. Done in a slot's goroutine, which
// then idles for the whole run, that stack would stay, and at tens of
// thousands of connections the stacks would be most of the load
// generator's memory. Done in a new goroutine per dial, every dial grows a
// new stack twice: a tenth of the load's CPU during a ramp as fast as
// possible (perf). The dialers' stacks grow once.
type dialers struct {
	dialer  check.Dialer
	target  string
	timeout time.Duration
	jobs    chan dialJob
	// ended is the Done channel of the context the dialers run on: a dial
	// asked for after they ended gets no dialer.
	ended <-chan struct{}
}

// dialJob is one dial and what to do with its outcome: then runs on the
// dialer, so it must be quick (count, hand over, start a goroutine).
type dialJob struct {
	ctx  context.Context
	then func(dialed)
}

// dialed is the outcome of one dial, with its latency: the dial's own,
// without the wait for a free dialer.
type dialed struct {
	conn    net.Conn
	err     error
	latency time.Duration
}

// newDialers returns the dialers of cfg, which has its defaults: to
// cfg.Target with cfg.Dialer, or on the host's network from cfg.Sources.
func newDialers(cfg Config) *dialers {
	d := cfg.Dialer
	if d == nil {
		d = hostDialer(cfg.Sources)
	}
	return &dialers{dialer: d, target: cfg.Target, timeout: cfg.DialTimeout, jobs: make(chan dialJob)}
}

// run starts n dialers in wg; they end with ctx.
func (p *dialers) run(ctx context.Context, n int, wg *sync.WaitGroup) {
	p.ended = ctx.Done()
	for range n {
		wg.Go(func() {
			for {
				select {
				case j := <-p.jobs:
					j.then(p.dialOne(j.ctx))
				case <-ctx.Done():
					return
				}
			}
		})
	}
}

func (p *dialers) dialOne(ctx context.Context) dialed {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	start := time.Now()
	c, err := p.dialer.DialContext(ctx, "tcp", p.target)
	return dialed{conn: c, err: err, latency: time.Since(start)}
}

// start hands a dial on dialCtx to a free dialer, which calls then with
// its outcome once it ends (within the timeout); it waits for one until
// waitCtx or the dialers end, and then reports false: then is never
// called. Call it after run.
func (p *dialers) start(waitCtx, dialCtx context.Context, then func(dialed)) bool {
	select {
	case p.jobs <- dialJob{dialCtx, then}:
		return true
	case <-waitCtx.Done():
		return false
	case <-p.ended:
		return false
	}
}

// dial waits for a free dialer, unless ctx or the dialers end first, and
// returns what its dial gave. Call it after run.
func (p *dialers) dial(ctx context.Context) dialed {
	reply := make(chan dialed, 1)
	if !p.start(ctx, ctx, func(d dialed) { reply <- d }) {
		if err := ctx.Err(); err != nil {
			return dialed{err: err}
		}
		return dialed{err: errStopped}
	}
	return <-reply
}
