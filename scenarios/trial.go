package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"

	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// A trial is one health configuration on its own lab: the link, the load,
// the health server in its container, and the orchestrator's prober.
type trial struct {
	spec  Spec
	cfg   ConfigSpec
	index int
	lab   harness.Tunnel
	rec   *recorder
	start time.Time

	// The health server listens on this loopback address in every
	// container incarnation, so the prober's URL stays valid. reserved
	// holds it from newTrial until the first incarnation takes it: closed
	// in between, the port could become the source port of another trial's
	// probe, and the first incarnation could not listen.
	addr     string
	reserved net.Listener

	load    loadgen.Result
	loadErr error
	window  window
	// delivered is what the sink had received as each step of the link
	// was applied, in their order; driveLink writes it, and Run reads it
	// once every goroutine of the trial has returned.
	delivered []sinkMark
}

// sinkMark is the sink's byte count at an offset of the run.
type sinkMark struct {
	at    time.Duration
	bytes int64
}

// window is what the sink received and the link carried between the end of
// the ramp and the first outage: the loaded, working link; and the sink's
// count at each step of the link, for the outages.
type window struct {
	from, to             time.Duration
	sinkBytes, linkBytes int64
	complete             bool
	// delivered, when known, is the sink's bytes as each of the link's
	// steps was applied (trial.delivered), for the outages' goodput.
	delivered []sinkMark
}

// newTrial starts the trial's lab and reserves the health server's address.
func newTrial(ctx context.Context, spec Spec, cfg ConfigSpec, index int, bufs harness.Buffers) (*trial, error) {
	set, err := spec.Link.settings()
	if err != nil {
		return nil, err
	}
	var lab harness.Tunnel
	if spec.Tunnel.Kind == TunnelOpenVPN {
		lab = harness.NewOpenVPN(harness.OpenVPNConfig{Link: set, Seed: spec.Seed + uint64(index), Transport: spec.Tunnel.Transport})
	} else {
		lab = harness.New(harness.Config{Link: set, Seed: spec.Seed + uint64(index), Buffers: bufs, ServerKeepalive: spec.Link.ServerKeepalive.Duration})
	}
	if err := lab.Start(ctx); err != nil {
		return nil, fmt.Errorf("%s: lab: %w", cfg.Name, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		lab.Close()
		return nil, err
	}
	return &trial{spec: spec, cfg: cfg, index: index, lab: lab, addr: ln.Addr().String(), reserved: ln}, nil
}

func (t *trial) close() error {
	if t.reserved != nil {
		t.reserved.Close()
	}
	return t.lab.Close()
}

// run drives the trial from t.start until ctx ends.
func (t *trial) run(ctx context.Context) error {
	c := &container{t: t, backoff: prober.CrashBackoff{}}
	if err := c.up(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it came up: the report says interrupted
		}
		return fmt.Errorf("%s: health server: %w", t.cfg.Name, err)
	}
	defer c.down()

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return t.driveLink(gctx) })
	if t.spec.Load.Conns > 0 { // none: an idle tunnel
		g.Go(func() error {
			t.load, t.loadErr = loadgen.Run(gctx, t.loadConfig())
			return nil // a load failure is reported, not fatal to the others
		})
	}
	if stream := t.spec.Load.Stream; stream > 0 {
		g.Go(func() error { return t.lab.Stream(gctx, stream) })
	}
	g.Go(func() error { return t.probe(gctx, c) })
	g.Go(func() error { t.measureWindow(gctx); return nil })
	if e, ok := t.lab.(exiter); ok {
		g.Go(func() error { return t.followExits(gctx, c, e) })
	}
	err := g.Wait()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return err
}

func (t *trial) loadConfig() loadgen.Config {
	l := t.spec.Load
	return loadgen.Config{
		Target:    t.lab.SinkAddr().String(),
		Dialer:    t.lab,
		PathName:  "lab",
		Conns:     l.Conns,
		Ramp:      l.Ramp.Duration,
		Duration:  t.spec.Duration.Duration - l.Ramp.Duration,
		Rate:      rate.Rate(math.Round(l.Share * float64(t.spec.Link.Rate))), // whole bits/s, as every rate
		Direction: l.Direction,
	}
}

// measureWindow reads the sink's and the link's byte counters at the start
// and the end of the working window. A run that ends inside the window (a
// Ctrl-C, or the run's own end at the window's) ends it there: the figures
// cover the load that ran.
func (t *trial) measureWindow(ctx context.Context) {
	w := window{from: t.spec.Load.Ramp.Duration, to: t.spec.workingEnd()}
	read := func() (sink, link int64) {
		st := t.lab.SinkStats()
		ls := t.lab.Link().Stats()
		return st.BytesIn + st.BytesOut, int64(ls.Uplink.Bytes + ls.Downlink.Bytes)
	}
	if !sleepUntil(ctx, t.start.Add(w.from)) {
		return // stopped during the ramp: no load at its rate to measure
	}
	s0, l0 := read()
	if !sleepUntil(ctx, t.start.Add(w.to)) {
		w.to = min(w.to, time.Since(t.start))
	}
	s1, l1 := read()
	w.sinkBytes, w.linkBytes, w.complete = s1-s0, l1-l0, true
	t.window = w
}

// driveLink applies the link's changes and outages at their times, and
// records the sink's bytes as each has been applied (t.delivered).
func (t *trial) driveLink(ctx context.Context) error {
	type step struct {
		at    time.Duration
		apply func(*harness.Settings)
	}
	var steps []step
	for _, c := range t.spec.Link.Changes {
		steps = append(steps, step{c.At.Duration, func(s *harness.Settings) { *s, _ = c.apply(*s) }})
	}
	for _, w := range t.spec.Link.Outages {
		steps = append(steps,
			step{w.Start.Duration, func(s *harness.Settings) { w.apply(s, true) }},
			step{w.End(), func(s *harness.Settings) { w.apply(s, false) }})
	}
	for _, w := range t.spec.Link.Drop {
		// The far side's filter follows from every window at once: the
		// steps only say when to look again.
		steps = append(steps, step{w.Start.Duration, func(*harness.Settings) {}})
		if w.Duration.Duration > 0 {
			steps = append(steps, step{w.Start.Duration + w.Duration.Duration, func(*harness.Settings) {}})
		}
	}
	// Stable: a change and an outage at the same time apply in spec order.
	slices.SortStableFunc(steps, func(a, b step) int { return cmp.Compare(a.at, b.at) })
	for _, s := range steps {
		if !sleepUntil(ctx, t.start.Add(s.at)) {
			return nil
		}
		// The MTU follows from every change and black hole at once, so
		// that the end of one restores what the others say.
		err := t.lab.Link().Update(func(set *harness.Settings) { s.apply(set); set.MTU = t.spec.Link.mtuAt(s.at) })
		if err != nil {
			return fmt.Errorf("%s: link at %v: %w", t.cfg.Name, s.at, err)
		}
		if len(t.spec.Link.Drop) > 0 {
			if err := t.lab.Drop(t.spec.Link.dropsAt(s.at)...); err != nil {
				return fmt.Errorf("%s: far side at %v: %w", t.cfg.Name, s.at, err)
			}
		}
		st := t.lab.SinkStats()
		t.delivered = append(t.delivered, sinkMark{s.at, st.BytesIn + st.BytesOut})
	}
	<-ctx.Done()
	return nil
}

// probe runs the orchestrator's prober against the container.
func (t *trial) probe(ctx context.Context, c *container) error {
	run, err := newProber(t.cfg.Prober, t.addr, rand.New(rand.NewPCG(t.spec.Seed, uint64(t.index))), t.rec, c)
	if err != nil {
		return fmt.Errorf("%s: prober: %w", t.cfg.Name, err)
	}
	if err := run(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("%s: prober: %w", t.cfg.Name, err)
	}
	return nil
}

// exiter is a tunnel whose ends are processes that can exit of their own
// accord (harness.OpenVPN).
type exiter interface {
	Exits() <-chan error
	ServerExits() <-chan error
	ClientPID() int // 0 while the client is down
}

// followExits restarts the container each time its VPN client's process
// exits on its own, as Docker's restart policy or the kubelet does when a
// container's main process dies, and records it (Timeline.Crashes). The
// server's exit fails the run: the far side is gone, and what follows is
// no measurement.
func (t *trial) followExits(ctx context.Context, c *container, e exiter) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-e.ServerExits():
			return fmt.Errorf("%s: the lab's VPN server exited: %w", t.cfg.Name, err)
		case err := <-e.Exits():
			t.rec.crash(time.Now())
			if rerr := c.restartAfterExit(ctx, e, err); rerr != nil && ctx.Err() == nil {
				return fmt.Errorf("%s: restart after the VPN client exited: %w", t.cfg.Name, rerr)
			}
		}
	}
}

// container is the VPN container the prober watches: the lab's client peer
// and the health server. A restart takes both down, waits the container's
// start delay and the crash back-off, and brings both up again.
type container struct {
	t       *trial
	backoff prober.CrashBackoff

	// restarting holds a restart: the prober's and one after the VPN
	// client's exit come one after the other.
	restarting sync.Mutex

	mu      sync.Mutex
	id      int
	started time.Time
	stop    func() // stops the running incarnation and waits for it
}

var _ prober.Container = (*container)(nil)

func (c *container) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%s-%d", c.t.cfg.Name, c.id)
}

func (c *container) StartedAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// Restart kills the container and starts a new one.
func (c *container) Restart(ctx context.Context, reason string) error {
	c.restarting.Lock()
	defer c.restarting.Unlock()
	return c.restartLocked(ctx, reason)
}

// restartAfterExit restarts the container after its VPN client exited on
// its own, unless a restart since (the prober's, which may have held the
// restart while the exit was read) has started a new client: restarting
// that one would kill a working tunnel for an exit already answered.
func (c *container) restartAfterExit(ctx context.Context, e exiter, exit error) error {
	c.restarting.Lock()
	defer c.restarting.Unlock()
	if e.ClientPID() != 0 {
		c.t.rec.note(fmt.Sprintf("the VPN client exited (%v); a restart since runs a new one", exit))
		return nil
	}
	return c.restartLocked(ctx, fmt.Sprintf("the VPN client exited (%v)", exit))
}

func (c *container) restartLocked(ctx context.Context, reason string) error {
	c.down()
	if err := c.t.lab.Down(); err != nil && !errors.Is(err, harness.ErrClientDown) {
		return err
	}
	c.t.rec.note("container stopped: " + reason)
	if !sleepUntil(ctx, time.Now().Add(c.t.spec.Container.StartDelay.Duration+c.backoff.Next(time.Now()))) {
		return ctx.Err()
	}
	if err := c.t.lab.Up(ctx); err != nil {
		return err
	}
	return c.up(ctx)
}

// up starts a health server incarnation: a new monitor (a restarted
// container starts with no state) serving on the trial's address.
func (c *container) up(ctx context.Context) error {
	t := c.t
	cfg, err := t.cfg.Health.config()
	if err != nil {
		return err
	}
	cfg.Observer = t.rec.observer()
	if t.cfg.Health.Heal {
		cfg.Heal = t.lab.Restart
	}
	if cfg.Evidence != nil {
		cfg.Evidence.Probes, cfg.Evidence.Source = []middleware.LightProbe{t.lab.LightProbe()}, t.lab
		if !t.cfg.Health.Evidence.NoDelivery {
			cfg.Evidence.Delivery = t.lab
		}
	}
	if t.cfg.Health.Preset == "upstream" {
		cfg.Tiers = preset.Upstream(t.lab.SmallCheck(), t.lab.TLSCheck()).Tiers
	}
	// GRPC: a grpc prober calls the health server on its one port.
	srv, err := server.New(t.lab.TLSCheck(), server.Config{Monitor: cfg, GRPC: true})
	if err != nil {
		return err
	}
	c.mu.Lock()
	ln := t.reserved // the first incarnation's
	t.reserved = nil
	c.mu.Unlock()
	for ln == nil {
		// The old incarnation's socket may linger a moment, or a probe's
		// connection use the port as its source a moment.
		if ln, err = net.Listen("tcp", t.addr); err == nil {
			break
		}
		if !sleepUntil(ctx, time.Now().Add(50*time.Millisecond)) {
			return ctx.Err()
		}
	}
	// The health server users deploy with `tunnelprobe serve`. An
	// incarnation lives until the container is killed, not with ctx.
	ictx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ictx, ln) })
	c.mu.Lock()
	c.id++
	c.started = time.Now()
	c.stop = func() {
		cancel()
		wg.Wait()
	}
	c.mu.Unlock()
	return nil
}

// down stops the running incarnation, if any.
func (c *container) down() {
	c.mu.Lock()
	stop := c.stop
	c.stop = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// sleepUntil waits until t or until ctx ends; it reports whether ctx is
// still alive.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
