package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dockercontainer "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
	"golang.org/x/sync/errgroup"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware"

	"github.com/tunnelprobe/tunnelprobe/internal/peakrss"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// The container scenarios: the quick suite's four configurations, each on
// its own topology of real containers on one user-defined Docker network,
// side by side:
//
//	load-<cfg> --SOCKS5--> client-<cfg> ==UDP==> link-<cfg> ==UDP==> server-<cfg>
//	                       health :9999 <-- kubelet (this process)
//
// A loaded phase first (false restarts), then three faults a single
// process cannot make, each an outage window of the spec, applied to every
// server container at once: paused (a black hole), stopped and started again
// (the peer gone, then back with a new CA), disconnected from the network
// and connected again. A kubelet restart stops and starts the client
// container for real, with the crash back-off.

const (
	ctrRamp   = 10 * time.Second
	ctrLoaded = 60 * time.Second // the load runs until the first fault
	ctrWindow = 40 * time.Second // each fault
	// ctrGap is the time between faults for every container to recover:
	// longer than the largest crash back-off a fault can leave (40 s after
	// a third restart) plus a start, so that each fault begins on a tunnel
	// that has been serving and proven alive, and no fault's restarts
	// spill into the next one's window.
	ctrGap     = 60 * time.Second
	ctrTail    = 15 * time.Second // after the last fault
	ctrSettle  = 10 * time.Second // after the ramp, before utilisation is measured
	ctrConns   = 300
	healthPort = "9999/tcp"
	ctrlPort   = "8080/tcp"
)

// containerSuite is the quick suite shortened to fit containers in a few
// minutes: the kubelet probes every 5 s (timeouts and waits scaled with
// it), its failureThreshold stays 3, and the outage is three faults.
func containerSuite() Spec {
	kubelet := func(endpoint string, timeout time.Duration) ProberSpec {
		return ProberSpec{
			Kind: "kubelet", Endpoint: endpoint, Period: D(5 * time.Second), Timeout: D(timeout),
			FailureThreshold: 3, InitialDelay: D(5 * time.Second),
		}
	}
	reference := referenceHealth()
	auto := reference
	auto.Mode = middleware.ModeAuto // its period (5 s) covers the kubelet's
	var outages []Window
	at := ctrLoaded
	for range faults {
		outages = append(outages, Window{Start: D(at), Duration: D(ctrWindow)})
		at += ctrWindow + ctrGap
	}
	return Spec{
		Name:     "containers",
		Seed:     1,
		Duration: D(at - ctrGap + ctrTail),
		Link:     LinkSpec{Rate: 20_000_000, Delay: D(10 * time.Millisecond), Queue: harness.QueueLimit{Packets: 256}, Outages: outages},
		Load:     LoadSpec{Conns: ctrConns, Ramp: D(ctrRamp)},
		Configs: []ConfigSpec{
			{Name: "reference", Health: reference, Prober: kubelet("/", time.Second)},
			{Name: "probe-only", Health: HealthSpec{Mode: middleware.ModeProbe}, Prober: kubelet("/check/?timeout=4s", 5*time.Second)},
			{Name: "auto", Health: auto, Prober: kubelet("/check/?timeout=4s", 5*time.Second)},
			{Name: "wait", Health: reference, Prober: kubelet("/?wait=4s", 5*time.Second)},
			{Name: "evidence", Health: evidenceHealth(), Prober: evidenceProber(5 * time.Second)},
			{Name: "upstream", Health: upstreamHealth(true), Prober: upstreamDocker()},
			{Name: "tcp-socket", Health: upstreamHealth(false), Prober: tcpSocketProber(kubelet("", time.Second))},
		},
	}
}

// A fault is done to every server container at the start of its window and
// undone at its end.
type fault struct {
	name       string
	do, undo   func(ctx context.Context, e *ctrEnv, l *ctrLab) error
	doneEffect string
}

var faults = []fault{
	{
		name: "pause", doneEffect: "paused (a black hole)",
		do: func(ctx context.Context, e *ctrEnv, l *ctrLab) error {
			_, err := e.cli.ContainerPause(ctx, l.server.GetContainerID(), client.ContainerPauseOptions{})
			return err
		},
		undo: func(ctx context.Context, e *ctrEnv, l *ctrLab) error {
			_, err := e.cli.ContainerUnpause(ctx, l.server.GetContainerID(), client.ContainerUnpauseOptions{})
			return err
		},
	},
	{
		name: "stop", doneEffect: "stopped (the peer gone), then started again",
		do: func(ctx context.Context, e *ctrEnv, l *ctrLab) error {
			grace := 2 * time.Second
			return l.server.Stop(ctx, &grace)
		},
		undo: func(ctx context.Context, e *ctrEnv, l *ctrLab) error { return l.server.Start(ctx) },
	},
	{
		name: "disconnect", doneEffect: "disconnected from the network, then connected again",
		do: func(ctx context.Context, e *ctrEnv, l *ctrLab) error {
			_, err := e.cli.NetworkDisconnect(ctx, e.nw.ID, client.NetworkDisconnectOptions{Container: l.server.GetContainerID(), Force: true})
			return err
		},
		undo: func(ctx context.Context, e *ctrEnv, l *ctrLab) error {
			_, err := e.cli.NetworkConnect(ctx, e.nw.ID, client.NetworkConnectOptions{
				Container: l.server.GetContainerID(),
				EndpointConfig: &network.EndpointSettings{
					Aliases:    []string{l.alias("server")},
					IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: l.serverIP},
				},
			})
			return err
		},
	},
}

// ctrEnv is what every topology shares.
type ctrEnv struct {
	cli    *testcontainers.DockerClient
	nw     *labNetwork
	image  string
	runID  string
	logger *tcLogger
	spec   Spec
}

// ctrLab is one configuration's topology.
type ctrLab struct {
	cfg      ConfigSpec
	index    int
	serverIP netip.Addr
	server   testcontainers.Container
	link     testcontainers.Container
	client   testcontainers.Container
	load     testcontainers.Container
	linkCtrl string // http://host:port of the link's control API
	health   string // http://host:port of the client's health server
	logs     *healthLog
	vpn      *vpnContainer

	mu  sync.Mutex
	rec *recorder
}

func (l *ctrLab) alias(role string) string { return role + "-" + l.cfg.Name }

func (l *ctrLab) recorder() *recorder {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec
}

func TestContainerScenarios(t *testing.T) {
	cli := needDocker(t)
	began := time.Now()
	// Stop in time for the cleanups to run: a test binary killed by -timeout
	// would leave every container behind (there is no reaper).
	deadline := began.Add(12 * time.Minute)
	if d, ok := t.Deadline(); ok && d.Add(-time.Minute).Before(deadline) {
		deadline = d.Add(-time.Minute)
	}
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	runID := fmt.Sprintf("%s-%04x", began.Format("20060102-150405"), rand.IntN(1<<16))
	logger := newTCLogger(t)
	env := &ctrEnv{cli: cli, runID: runID, logger: logger, spec: containerSuite()}
	if err := env.spec.Validate(); err != nil {
		t.Fatal(err)
	}
	env.image = buildImage(ctx, t, cli, logger, runID)
	env.nw = newLabNetwork(ctx, t)
	t.Logf("network %s (%s), image %s", env.nw.Name, env.nw.subnet, env.image)

	labs := make([]*ctrLab, len(env.spec.Configs))
	for i, c := range env.spec.Configs {
		labs[i] = &ctrLab{cfg: c, index: i, serverIP: env.nw.staticAddr(i), logs: newHealthLog()}
	}
	// Cleanups are registered as each container is created, before any use,
	// from these goroutines; a failure stops the test once all returned.
	var g errgroup.Group
	for _, l := range labs {
		g.Go(func() error { return env.startTopology(ctx, t, l) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d topologies up in %v", len(labs), time.Since(began).Round(time.Second))

	rep, err := env.run(ctx, t, labs)
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("TUNNELPROBE_RESULTS_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "tunnelprobe-containers-"+runID)
	}
	if err := rep.WriteResults(dir); err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	_ = rep.WriteTable(&table)
	t.Logf("results in %s (report.md, report.json, timeline.png)\n%s", dir, table.String())
	for _, l := range labs {
		l.vpn.mu.Lock()
		t.Logf("%s: %d container restarts: %s", l.cfg.Name, len(l.vpn.restarts), strings.Join(l.vpn.restarts, "; "))
		l.vpn.mu.Unlock()
	}

	for _, name := range rep.Order {
		c := rep.Configs[name]
		prevEnd := 0.0
		for i, o := range c.Outages {
			// A probe that cannot notice an outage (tcpSocket), or a
			// schedule with no time to act, missing one is the result.
			cannot := o.TooShort || env.spec.Configs[slices.Index(rep.Order, name)].Prober.Handler == handlerTCPSocket
			// A restart or heal of the working tunnel just before can
			// leave the container stopping, in its back-off and initial
			// delay for the whole outage (a stop took 37 s on a loaded CI
			// machine): the report shows that false action, as
			// TestScenarioQuick allows. Missing one with no such action is
			// a failure.
			busy := slices.ContainsFunc(slices.Concat(c.Timeline.Restarts, c.Timeline.Heals), func(a Offset) bool {
				return float64(a) >= prevEnd && float64(a) < o.Start
			})
			prevEnd = o.End
			switch {
			case !o.Detected && cannot:
				t.Logf("%s did not act on outage %d (%s), as expected: %s", name, i+1, faults[i].name, missReason(o))
			case !o.Detected && busy:
				t.Logf("%s did not act on outage %d (%s): it had restarted or healed the working tunnel just before, which the report counts",
					name, i+1, faults[i].name)
			case !o.Detected:
				t.Errorf("%s did not detect outage %d (%s, %.0f-%.0f s): no restart or heal in the window",
					name, i+1, faults[i].name, o.Start, o.End)
			}
		}
		if !c.OutageDetected {
			t.Logf("%s: the health server's last log lines:\n%s", name, labs[slices.Index(rep.Order, name)].logs.lastLines())
		}
		if c.ConnsAchieved == 0 {
			t.Errorf("%s: the load opened no connection through the client's SOCKS5 ingress (%s)", name, c.LoadError)
		}
	}
	t.Logf("container scenarios took %v in all", time.Since(began).Round(time.Second))
}

// request returns a container request of ours: the image, the network with
// the role's alias, a name naming the run, quiet testcontainers logs.
func (e *ctrEnv) request(l *ctrLab, role string, cmd ...string) testcontainers.ContainerRequest {
	return testcontainers.ContainerRequest{
		Image:          e.image,
		Name:           fmt.Sprintf("tunnelprobe-%s-%s", e.runID, l.alias(role)),
		Cmd:            cmd,
		Networks:       []string{e.nw.Name},
		NetworkAliases: map[string][]string{e.nw.Name: {l.alias(role)}},
		Labels:         map[string]string{"org.tunnelprobe.run": e.runID},
	}
}

// start creates and starts a container, its cleanup registered before
// anything else is done with it.
func (e *ctrEnv) start(ctx context.Context, t *testing.T, req testcontainers.ContainerRequest) (testcontainers.Container, error) {
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: req, Started: true, Logger: e.logger,
	})
	testcontainers.CleanupContainer(t, ctr, testcontainers.StopTimeout(2*time.Second))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Name, err)
	}
	return ctr, nil
}

// startTopology starts the server, the link and the client of l.
func (e *ctrEnv) startTopology(ctx context.Context, t *testing.T, l *ctrLab) error {
	serverKey, err := harness.GenerateKey()
	if err != nil {
		return err
	}
	clientKey, err := harness.GenerateKey()
	if err != nil {
		return err
	}
	// The server writes its CA (a new one at every start) into a volume the
	// client reads it from. Removed after the containers (cleanups run last
	// registered first).
	volume := fmt.Sprintf("tunnelprobe-%s-ca-%s", e.runID, l.cfg.Name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := e.cli.VolumeRemove(ctx, volume, client.VolumeRemoveOptions{Force: true})
		if err != nil && !strings.Contains(err.Error(), "no such volume") {
			t.Errorf("remove volume %s: %v", volume, err)
		}
	})
	keyFile := func(k harness.Key, path string) testcontainers.ContainerFile {
		return testcontainers.ContainerFile{Reader: strings.NewReader(k.String() + "\n"), ContainerFilePath: path, FileMode: 0o600}
	}

	req := e.request(l, "server", "lab", "server", "--listen", "0.0.0.0:51820", "--key", "/lab/server.key",
		"--peer", clientKey.Public().String(), "--ca-out", "/ca/ca.pem")
	req.Files = []testcontainers.ContainerFile{keyFile(serverKey, "/lab/server.key")}
	req.Mounts = testcontainers.ContainerMounts{testcontainers.VolumeMount(volume, "/ca")}
	req.EndpointSettingsModifier = func(m map[string]*network.EndpointSettings) {
		if s := m[e.nw.Name]; s != nil {
			s.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: l.serverIP}
		}
	}
	req.WaitingFor = wait.ForLog("public-key ").WithStartupTimeout(time.Minute)
	if l.server, err = e.start(ctx, t, req); err != nil {
		return err
	}

	link := e.spec.Link
	req = e.request(l, "link", "lab", "link", "--listen", "0.0.0.0:51821", "--server", l.alias("server")+":51820",
		"--rate", link.Rate.String(), "--delay", link.Delay.String(), "--queue", link.Queue.String(),
		"--seed", strconv.FormatUint(e.spec.Seed+uint64(l.index), 10), "--control", "0.0.0.0:8080")
	req.ExposedPorts = []string{ctrlPort}
	req.WaitingFor = wait.ForLog("control http://").WithStartupTimeout(time.Minute)
	if l.link, err = e.start(ctx, t, req); err != nil {
		return err
	}
	if l.linkCtrl, err = endpoint(ctx, l.link, ctrlPort); err != nil {
		return err
	}

	hostPort := freePort(t)
	args := []string{"lab", "client", "--listen", "0.0.0.0:0", "--endpoint", l.alias("link") + ":51821",
		"--key", "/lab/client.key", "--peer", serverKey.Public().String(), "--socks5", "0.0.0.0:1080",
		"--serve", "0.0.0.0:9999", "--tls-ca", "/ca/ca.pem", "--log-format", "json", "--log-level", "debug"}
	args = append(args, healthFlags(l.cfg.Health)...)
	req = e.request(l, "client", args...)
	req.Files = []testcontainers.ContainerFile{keyFile(clientKey, "/lab/client.key")}
	req.Mounts = testcontainers.ContainerMounts{{Source: testcontainers.GenericVolumeMountSource{Name: volume}, Target: "/ca", ReadOnly: true}}
	req.ExposedPorts = []string{healthPort}
	req.HostConfigModifier = func(hc *dockercontainer.HostConfig) {
		// A fixed host port: the kubelet's URL outlives restarts.
		hc.PortBindings = network.PortMap{network.MustParsePort(healthPort): {{HostPort: hostPort}}}
	}
	req.LogConsumerCfg = &testcontainers.LogConsumerConfig{
		Opts:      []testcontainers.LogProductionOption{testcontainers.WithLogProductionTimeout(time.Minute)},
		Consumers: []testcontainers.LogConsumer{l.logs},
	}
	// At every start: the SOCKS5 ingress and the health server answering
	// (any status: the tunnel may be down). The log line alone would match
	// an earlier incarnation's after a restart.
	req.WaitingFor = wait.ForAll(
		wait.ForLog("socks5 "),
		wait.ForHTTP("/").WithPort(healthPort).WithStatusCodeMatcher(func(int) bool { return true }).
			WithPollInterval(50*time.Millisecond),
	).WithStartupTimeoutDefault(time.Minute)
	if l.client, err = e.start(ctx, t, req); err != nil {
		return err
	}
	if l.health, err = endpoint(ctx, l.client, healthPort); err != nil {
		return err
	}
	l.vpn = &vpnContainer{name: l.alias("client"), ctr: l.client, rec: l.recorder, grace: prober.MinGracePeriod, started: time.Now()}
	return nil
}

// missReason says why a configuration that cannot act on an outage
// missed it.
func missReason(o OutageReport) string {
	if o.TooShort {
		return "its schedule needs longer than the outage"
	}
	return "a tcpSocket probe passes while the health server listens"
}

// healthFlags are the client's health server flags for h.
func healthFlags(h HealthSpec) []string {
	f := []string{"--heal=" + strconv.FormatBool(h.Heal)}
	if h.Preset != "" {
		return append(f, "--preset", h.Preset)
	}
	f = append(f, "--mode", h.Mode.String())
	if h.Period.Duration > 0 {
		f = append(f, "--period", h.Period.String())
	}
	switch len(h.Timeouts) {
	case 0:
	case 1:
		f = append(f, "--timeout", h.Timeouts[0].String())
	default:
		var ts []string
		for _, d := range h.Timeouts {
			ts = append(ts, d.String())
		}
		f = append(f, "--timeouts", strings.Join(ts, ","))
	}
	if h.FailureThreshold > 0 {
		f = append(f, "--failure-threshold", strconv.Itoa(h.FailureThreshold))
	}
	if e := h.Evidence; e != nil {
		f = append(f, "--evidence")
		if e.Window.Duration > 0 {
			f = append(f, "--evidence-window", e.Window.String())
		}
		if e.Interval.Duration > 0 {
			f = append(f, "--evidence-interval", e.Interval.String())
		}
		if e.MaxLoss > 0 {
			f = append(f, "--max-loss", strconv.FormatFloat(e.MaxLoss, 'g', -1, 64))
		}
	}
	return f
}

// endpoint returns http://host:port of a container's published port.
func endpoint(ctx context.Context, ctr testcontainers.Container, port string) (string, error) {
	host, err := ctr.Host(ctx)
	if err != nil {
		return "", err
	}
	p, err := ctr.MappedPort(ctx, port)
	if err != nil {
		return "", err
	}
	return "http://" + netJoin(host, strconv.Itoa(int(p.Num()))), nil
}

func netJoin(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// run drives the spec over the topologies: the loads, the kubelets, the
// faults, the link counters; then measures.
func (e *ctrEnv) run(ctx context.Context, t *testing.T, labs []*ctrLab) (*Report, error) {
	spec := e.spec
	start := time.Now()
	for _, l := range labs {
		r := newRecorder(start)
		l.mu.Lock()
		l.rec = r
		l.mu.Unlock()
		l.logs.rec.Store(r)
	}
	runCtx, cancel := context.WithDeadline(ctx, start.Add(spec.Duration.Duration))
	defer cancel()
	windows := make([]window, len(labs))
	g, gctx := errgroup.WithContext(runCtx)
	for i, l := range labs {
		g.Go(func() error { return e.startLoad(gctx, t, l) })
		g.Go(func() error { return l.probe(gctx, spec) })
		g.Go(func() error { windows[i] = l.measureWindow(gctx, spec, start); return nil })
	}
	g.Go(func() error { return e.driveFaults(gctx, t, labs, start) })
	if err := g.Wait(); ctx.Err() != nil {
		return nil, fmt.Errorf("the run did not finish (the test's deadline): %w", ctx.Err())
	} else if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}

	rep := &Report{
		Name: spec.Name, Seed: spec.Seed, Started: start, DurationSeconds: time.Since(start).Seconds(),
		PeakRSSBytes: peakrss.Bytes(), Spec: spec, Configs: map[string]ConfigReport{},
	}
	for i, l := range labs {
		load, loadErr := e.readLoad(ctx, l)
		cr := measure(spec, l.cfg, l.rec.timeline(), load, start, windows[i])
		if loadErr != nil {
			cr.LoadError = loadErr.Error()
		}
		rep.Configs[l.cfg.Name] = cr
		rep.Order = append(rep.Order, l.cfg.Name)
	}
	return rep, nil
}

// startLoad starts l's load container: greedy connections to the server's
// sink through the client's SOCKS5 ingress, from the start of the run until
// the first fault.
func (e *ctrEnv) startLoad(ctx context.Context, t *testing.T, l *ctrLab) error {
	hold := e.spec.workingEnd() - e.spec.Load.Ramp.Duration
	req := e.request(l, "load", "load", "--socks5", l.alias("client")+":1080",
		"--target", harness.SinkHost+":"+strconv.Itoa(harness.SinkPort),
		"--conns", strconv.Itoa(e.spec.Load.Conns), "--ramp", e.spec.Load.Ramp.String(),
		"--duration", hold.String(), "--rate", "greedy", "--json", "/lab/load.json")
	ctr, err := e.start(ctx, t, req)
	l.load = ctr
	return err
}

// readLoad reads the load's results once its container has exited.
func (e *ctrEnv) readLoad(ctx context.Context, l *ctrLab) (loadgen.Result, error) {
	if l.load == nil {
		return loadgen.Result{}, fmt.Errorf("no load container")
	}
	// The load ends by itself at the end of its --duration; the bound is
	// a safety net only.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	wait := e.cli.ContainerWait(wctx, l.load.GetContainerID(), client.ContainerWaitOptions{Condition: dockercontainer.WaitConditionNotRunning})
	select {
	case r := <-wait.Result:
		if r.StatusCode != 0 {
			return e.decodeLoad(ctx, l, fmt.Errorf("load exited with %d", r.StatusCode))
		}
		return e.decodeLoad(ctx, l, nil)
	case err := <-wait.Error:
		return loadgen.Result{}, fmt.Errorf("waiting for the load to end: %w", err)
	}
}

func (e *ctrEnv) decodeLoad(ctx context.Context, l *ctrLab, exitErr error) (loadgen.Result, error) {
	b, err := copyOut(ctx, l.load, "/lab/load.json")
	if err != nil {
		return loadgen.Result{}, fmt.Errorf("load results: %w (%v)", err, exitErr)
	}
	// Only what measure uses; the histograms stay in the file.
	var r struct {
		ConnsAchieved int64            `json:"conns_achieved"`
		Series        []loadgen.Second `json:"series"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return loadgen.Result{}, fmt.Errorf("load results: %w", err)
	}
	return loadgen.Result{ConnsAchieved: r.ConnsAchieved, Series: r.Series}, exitErr
}

// probe runs the prober against l's client container until ctx ends.
func (l *ctrLab) probe(ctx context.Context, spec Spec) error {
	run, err := newProber(l.cfg.Prober, strings.TrimPrefix(l.health, "http://"), rand.New(rand.NewPCG(spec.Seed, uint64(l.index))), l.recorder(), l.vpn)
	if err != nil {
		return fmt.Errorf("%s: prober: %w", l.cfg.Name, err)
	}
	if err := run(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("%s: prober: %w", l.cfg.Name, err)
	}
	return nil
}

// measureWindow reads the link's byte counters once the load has settled
// and at the first fault. The server container's sink counters are out of
// reach, and the load's own byte counts are not what arrived (hundreds of
// connections buffer megabytes along the way): the link's uplink, what it
// carried towards the sink (WireGuard and TCP overhead and retransmissions
// included), stands for the sink's bytes; link bytes are both directions,
// as in the in-process runner.
func (l *ctrLab) measureWindow(ctx context.Context, spec Spec, start time.Time) window {
	w := window{from: spec.Load.Ramp.Duration + ctrSettle, to: spec.workingEnd()}
	read := func() (up, both int64, ok bool) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, l.linkCtrl+"/link", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, 0, false
		}
		defer resp.Body.Close()
		var st harness.LinkState
		if json.NewDecoder(resp.Body).Decode(&st) != nil {
			return 0, 0, false
		}
		return int64(st.Uplink.Bytes), int64(st.Uplink.Bytes + st.Downlink.Bytes), true
	}
	if !sleepUntil(ctx, start.Add(w.from)) {
		return w
	}
	u0, l0, ok0 := read()
	if !sleepUntil(ctx, start.Add(w.to)) {
		return w
	}
	u1, l1, ok1 := read()
	w.sinkBytes, w.linkBytes, w.complete = u1-u0, l1-l0, ok0 && ok1
	return w
}

// driveFaults does and undoes each fault to every server at the times of
// the spec's outage windows.
func (e *ctrEnv) driveFaults(ctx context.Context, t *testing.T, labs []*ctrLab, start time.Time) error {
	each := func(what string, f func(context.Context, *ctrEnv, *ctrLab) error) error {
		// Undoing must finish even at the end of the run.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		var g errgroup.Group
		for _, l := range labs {
			g.Go(func() error {
				if err := f(fctx, e, l); err != nil {
					return fmt.Errorf("%s: %s: %w", l.alias("server"), what, err)
				}
				l.recorder().note("server " + what)
				return nil
			})
		}
		return g.Wait()
	}
	for i, w := range e.spec.Link.Outages {
		f := faults[i]
		if !sleepUntil(ctx, start.Add(w.Start.Duration)) {
			return nil
		}
		t.Logf("%5.1fs fault %d: servers %s", time.Since(start).Seconds(), i+1, f.doneEffect)
		if err := each(f.name, f.do); err != nil {
			return err
		}
		sleepUntil(ctx, start.Add(w.End()))
		if err := each("un"+f.name, f.undo); err != nil {
			return err
		}
		t.Logf("%5.1fs fault %d over", time.Since(start).Seconds(), i+1)
	}
	return nil
}
