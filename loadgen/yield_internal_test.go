package loadgen

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// notify sends on ch without blocking: one pending signal is enough.
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// serveSink serves a sink on a loopback port until the test ends, and
// returns its address.
func serveSink(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var served sync.WaitGroup
	served.Go(func() { _ = (&sink.Server{}).Serve(ctx, ln) })
	t.Cleanup(func() { cancel(); served.Wait() })
	return ln.Addr().String()
}

// watchParks returns a channel signalled each time a greedy flow parks at
// a shut gate, until the test ends.
func watchParks(t *testing.T) chan struct{} {
	parked := make(chan struct{}, 1)
	testHookParked = func() { notify(parked) }
	t.Cleanup(func() { testHookParked = nil })
	return parked
}

// watchHeld counts, until the test ends, the greedy flows parked and the
// starts held at a shut gate, and returns a wait for n of them in all,
// which ends early with ctx.
func watchHeld(t *testing.T) func(ctx context.Context, n int64) error {
	held := make(chan struct{}, 1)
	var count atomic.Int64
	testHookParked = func() { count.Add(1); notify(held) }
	t.Cleanup(func() { testHookParked = nil })
	return func(ctx context.Context, n int64) error {
		for count.Load() < n {
			select {
			case <-held:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
}

// dialSignalling dials addr and returns the connection wrapped to signal
// payload on every write.
func dialSignalling(ctx context.Context, addr string, payload chan struct{}) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &writeSignalConn{Conn: c, payload: payload}, nil
}

// writeSignalConn signals payload on every write, the sink header's too.
type writeSignalConn struct {
	net.Conn
	payload chan struct{}
}

func (c *writeSignalConn) Write(p []byte) (int, error) {
	notify(c.payload)
	return c.Conn.Write(p)
}

// A greedy connection that opened while the ramp still waits for another
// dial parks instead of starting its flow (not even its header, which sets
// the sink to work), and writes once the ramp is over.
func TestGreedyYieldsToRampBehind(t *testing.T) {
	addr := serveSink(t)
	parked := watchParks(t)

	payload := make(chan struct{}, 1)
	var dials atomic.Int64
	var wroteWhileBehind atomic.Bool
	var plain net.Dialer
	dialer := check.DialerFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return dialSignalling(ctx, addr, payload)
		}
		// The second dial is slow: the ramp is behind until it ends.
		select {
		case <-parked:
		case <-payload:
			wroteWhileBehind.Store(true)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return plain.DialContext(ctx, network, addr)
	})
	res, err := Run(context.Background(), Config{
		Target: addr, Dialer: dialer, Conns: 2,
		Duration: 50 * time.Millisecond, NoReconnect: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if wroteWhileBehind.Load() {
		t.Error("a greedy connection wrote while the ramp waited for a dial")
	}
	if res.ConnsAchieved != 2 || res.BytesUp == 0 {
		t.Errorf("opened %d of 2, wrote %d bytes: want both open and writing after the ramp", res.ConnsAchieved, res.BytesUp)
	}
}

// Once the ramp has started its last dial, it is behind until that dial
// has ended, even though every dial started on time: a greedy connection
// already open parks, so that the completions of the last dials do not
// wait behind its flow.
func TestGreedyYieldsToTheRampsLastDials(t *testing.T) {
	addr := serveSink(t)
	parked := watchParks(t)

	var dials atomic.Int64
	var sawParked atomic.Bool
	var plain net.Dialer
	dialer := check.DialerFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 2 {
			// The last dial ends only once the open connection has
			// parked, or fails at its timeout.
			select {
			case <-parked:
				sawParked.Store(true)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return plain.DialContext(ctx, network, addr)
	})
	// Two dials 10 ms apart: the second starts on time.
	res, err := Run(context.Background(), Config{
		Target: addr, Dialer: dialer, Conns: 2, Ramp: 20 * time.Millisecond,
		DialTimeout: 2 * time.Second, Duration: 50 * time.Millisecond, NoReconnect: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawParked.Load() {
		t.Error("the open greedy connection kept its flow going while the ramp's last dial was pending")
	}
	if res.ConnsAchieved != 2 || res.BytesUp == 0 {
		t.Errorf("opened %d of 2, wrote %d bytes: want both open and writing after the ramp", res.ConnsAchieved, res.BytesUp)
	}
}

// A last dial that the path holds (it never ends on its own) does not stop
// the greedy flows for the rest of its timeout: once the last dials have
// stopped ending, the flows go on.
func TestGreedyGoesOnPastAHeldLastDial(t *testing.T) {
	addr := serveSink(t)
	parked := watchParks(t)

	payload := make(chan struct{}, 1)
	var dials atomic.Int64
	var wentOn atomic.Bool
	dialer := check.DialerFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return dialSignalling(ctx, addr, payload)
		}
		// The last dial is held: the open connection parks first, then
		// must write again while the dial is still pending.
		select {
		case <-parked:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case <-payload: // written before it parked
		default:
		}
		// It gives up well before the ramp's deadline, which would
		// open the gate by itself.
		giveUp := time.NewTimer(2*tailQuiet + time.Second)
		defer giveUp.Stop()
		select {
		case <-payload:
			wentOn.Store(true)
		case <-giveUp.C:
		case <-ctx.Done():
		}
		return nil, errors.New("held by the path")
	})
	res, err := Run(context.Background(), Config{
		Target: addr, Dialer: dialer, Conns: 2, Ramp: 20 * time.Millisecond,
		DialTimeout: 4*tailQuiet + time.Second, Duration: 50 * time.Millisecond, NoReconnect: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !wentOn.Load() {
		t.Error("the open greedy connection stood still for the held last dial's whole timeout")
	}
	if res.ConnsAchieved != 1 {
		t.Errorf("opened %d, want 1 (the other dial held)", res.ConnsAchieved)
	}
}

// In a ramp as fast as possible, a greedy connection that opened waits for
// the ramp's last dial with no goroutine of its own, and starts its flow
// once the ramp is over.
func TestFastRampStartsNoFlowGoroutines(t *testing.T) {
	addr := serveSink(t)
	const conns = 8
	waitHeld := watchHeld(t)
	var dials atomic.Int64
	slotsDuringRamp := -1
	var plain net.Dialer
	dialer := check.DialerFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == conns {
			// The last dial ends once every other connection waits
			// at the gate, when it counts their goroutines.
			if err := waitHeld(ctx, conns-1); err != nil {
				return nil, err
			}
			slotsDuringRamp = goroutinesIn("loadgen.(*run).slot(")
		}
		return plain.DialContext(ctx, network, addr)
	})
	res, err := Run(context.Background(), Config{
		Target: addr, Dialer: dialer, Conns: conns,
		Duration: 50 * time.Millisecond, NoReconnect: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if slotsDuringRamp != 0 {
		t.Errorf("%d connections had a goroutine while the ramp's last dial was pending, want 0", slotsDuringRamp)
	}
	if res.ConnsAchieved != conns || res.BytesUp == 0 {
		t.Errorf("opened %d of %d, wrote %d bytes: want all open and writing after the ramp", res.ConnsAchieved, conns, res.BytesUp)
	}
}

// A ramp as fast as possible interrupted while its connections wait at the
// gate, unstarted, for a last dial that never ends: Run returns, marked
// interrupted, with every connection it opened closed (and, by TestMain's
// goleak, no goroutine left behind).
func TestFastRampInterruptedWhileStartsAreHeld(t *testing.T) {
	addr := serveSink(t)
	const conns = 8
	waitHeld := watchHeld(t)
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var dials atomic.Int64
	var mu sync.Mutex
	var opened []*closeTrackingConn
	var plain net.Dialer
	dialer := check.DialerFunc(func(dctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == conns {
			// The last dial: once every other connection is held,
			// the Ctrl-C; the dial itself ends only with the run.
			if err := waitHeld(dctx, conns-1); err != nil {
				return nil, err
			}
			interrupt()
			<-dctx.Done()
			return nil, dctx.Err()
		}
		c, err := plain.DialContext(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &closeTrackingConn{Conn: c}
		mu.Lock()
		opened = append(opened, tc)
		mu.Unlock()
		return tc, nil
	})
	res, err := Run(ctx, Config{Target: addr, Dialer: dialer, Conns: conns, Duration: time.Minute, NoReconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.ConnsAchieved != conns-1 {
		t.Errorf("interrupted %v, opened %d: want interrupted with %d open", res.Interrupted, res.ConnsAchieved, conns-1)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, c := range opened {
		if !c.closed.Load() {
			t.Errorf("connection %d of %d left open after Run returned", i+1, len(opened))
		}
	}
}

// closeTrackingConn records that it was closed.
type closeTrackingConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *closeTrackingConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// goroutinesIn counts the goroutines with fn on their stack.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), fn)
		}
		buf = make([]byte, 2*len(buf))
	}
}

func TestRampGate(t *testing.T) {
	var g rampGate
	if !g.wait(context.Background()) {
		t.Fatal("the zero gate is not open")
	}
	g.set(true)
	g.set(true) // shutting a shut gate changes nothing
	passed := make(chan bool, 1)
	go func() { passed <- g.wait(context.Background()) }()
	g.set(false)
	if !<-passed {
		t.Error("a waiter at a gate that opened saw its context end")
	}

	g.set(true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if g.wait(ctx) {
		t.Error("wait at a shut gate with an ended context reported it live")
	}
	g.set(false)
}
