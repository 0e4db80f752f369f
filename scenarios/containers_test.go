package scenarios

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"go.yaml.in/yaml/v3"
	"golang.org/x/sync/errgroup"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware"

	"github.com/tunnelprobe/tunnelprobe/internal/exclusive"
	"github.com/tunnelprobe/tunnelprobe/internal/peakrss"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// The container scenarios: the quick suite's configurations, each on the
// topology deploy/ tells users to run, in real containers on one
// user-defined Docker network, WireGuard's and OpenVPN's side by side under
// one schedule:
//
//	pod-<cfg>: lab pause, holds the network namespace (a pod's sandbox)
//	  vpn-<cfg>:    lab client on a kernel TUN (wireguard-go, or openvpn)
//	  health-<cfg>: tunnelprobe serve :9999 <-- kubelet (this process), by the pod's address
//	  load-<cfg>:   tunnelprobe load through the kernel's routes
//	vpn ==UDP==> link-<cfg> ==UDP==> server-<cfg>
//
// A loaded phase first (false restarts), then four faults, each an outage
// window of the spec, applied to every topology at once: the server paused
// (a black hole), stopped and started again (the peer gone, then back with
// a new CA), disconnected from the network and connected again, and the
// link cut one way (the server no longer hears the client). A kubelet
// restart stops and starts the VPN container for real, with the crash
// back-off; the health sidecar goes on in the pod's namespace and must
// follow the new device. Each configuration is timed against its own
// faults from when Docker had them in place. A run that the machine held
// too long to judge (starvation) is said to be so and run once more; the
// rules a run is judged by are in containers_judge_test.go.

const (
	ctrRamp   = 10 * time.Second
	ctrLoaded = 40 * time.Second // the load runs until the first fault
	ctrWindow = 30 * time.Second // each fault: the slowest configuration that must act needs 25 s
	// ctrGap is the time between faults for every container to recover:
	// the largest crash back-off a fault can leave (40 s after a fourth
	// restart) begins inside the fault, a few seconds in, so it and a
	// start end within the gap: each fault begins on a tunnel that has
	// been serving and proven alive, and no fault's restarts spill into
	// the next one's window.
	ctrGap    = 40 * time.Second
	ctrTail   = 10 * time.Second // after the last fault
	ctrSettle = 10 * time.Second // after the ramp, before utilisation is measured
	// The link and its load are scaled so that the eleven topologies load
	// their links on two cores beside the other tests: a loaded link's
	// queue (16 full-size packets, 370 ms at 500 kbit/s, as 256 are at 8
	// Mbit/s) shared by a few more greedy connections than it holds, as
	// the in-process suites' 1,000 to 2,000 share 256. A topology loaded
	// so costs about 6-8% of a core here (its link, VPN and server), at
	// 20 Mbit/s with 300 connections about 60%: eleven then needed about
	// 7 cores and loaded their links to 0-65% of the rate.
	ctrRate  = 500_000
	ctrQueue = 16
	ctrConns = 20
	// healthPort is where every sidecar serves, on its pod's address;
	// linkControl the link's control API, on the link's.
	healthPort  = "9999"
	linkControl = "8080"
)

// containerSuite is the quick suite shortened to fit containers in a few
// minutes: the kubelet probes every 5 s (timeouts and waits scaled with
// it), its failureThreshold stays 3, and the outage is four faults.
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
	for _, f := range faults {
		outages = append(outages, Window{Start: D(at), Duration: D(ctrWindow), Direction: f.direction})
		at += ctrWindow + ctrGap
	}
	return Spec{
		Name:     "containers",
		Seed:     1,
		Duration: D(at - ctrGap + ctrTail),
		Link:     LinkSpec{Rate: ctrRate, Delay: D(10 * time.Millisecond), Queue: harness.QueueLimit{Packets: ctrQueue}, Outages: outages},
		Load:     LoadSpec{Conns: ctrConns, Ramp: D(ctrRamp)},
		Configs: []ConfigSpec{
			{Name: "reference", Health: reference, Prober: kubelet("/", time.Second)},
			{Name: "probe-only", Health: HealthSpec{Mode: middleware.ModeProbe}, Prober: kubelet("/check/?timeout=4s", 5*time.Second)},
			{Name: "auto", Health: auto, Prober: kubelet("/check/?timeout=4s", 5*time.Second)},
			{Name: "wait", Health: reference, Prober: kubelet("/?wait=4s", 5*time.Second)},
			{Name: "evidence", Health: evidenceHealth(), Prober: evidenceProber(5 * time.Second)},
			{Name: "upstream", Health: upstreamHealth(true), Prober: upstreamDocker()},
			{Name: "tcp-socket", Health: upstreamHealth(false), Prober: tcpSocketProber(kubelet("", time.Second))},
			// deploy/compose's health service, its command read from there
			// (composeServeArgs): loop mode with evidence, healing through
			// the VPN's control API; Docker's healthcheck only marks.
			{Name: "compose", Health: HealthSpec{
				Mode: middleware.ModeLoop, Period: D(time.Second), Timeouts: middleware.Ladder{9 * time.Second},
				FailureThreshold: 2, Heal: true, Evidence: &EvidenceSpec{},
			}, Prober: ProberSpec{
				Kind: "docker", Endpoint: "/", Period: D(5 * time.Second), Timeout: D(2 * time.Second),
				StartPeriod: D(10 * time.Second), FailureThreshold: 2,
			}},
		},
	}
}

// openvpnContainerSuite is the container suite on the real openvpn over
// UDP: the configurations that answer the question on OpenVPN (the
// probe alone, evidence, and deploy/compose's), under the same link, load
// and schedule.
func openvpnContainerSuite() Spec {
	s := containerSuite()
	s.Name = "containers-openvpn"
	s.Tunnel = TunnelSpec{Kind: TunnelOpenVPN, Transport: harness.TransportUDP}
	s.Configs = slices.DeleteFunc(s.Configs, func(c ConfigSpec) bool {
		return !slices.Contains([]string{"probe-only", "evidence", "compose"}, c.Name)
	})
	return s
}

// A fault is done to every topology at the start of its window and undone
// at its end.
type fault struct {
	name       string
	do, undo   func(ctx context.Context, l *ctrLab) error
	doneEffect string
	direction  OutageDirection
}

var faults = []fault{
	{
		name: "pause", doneEffect: "paused (a black hole)",
		do: func(ctx context.Context, l *ctrLab) error {
			// The cgroup freezer can fail to freeze a busy container at
			// once ("unable to freeze"); runc gives up after its own
			// retries, and a later try succeeds. The fault counts from when
			// it is in place.
			var err error
			for try := 0; try < 3; try++ {
				if _, err = l.env.cli.ContainerPause(ctx, l.server.GetContainerID(), client.ContainerPauseOptions{}); err == nil ||
					!strings.Contains(err.Error(), "unable to freeze") || !sleepUntil(ctx, time.Now().Add(time.Second)) {
					break
				}
			}
			return err
		},
		undo: func(ctx context.Context, l *ctrLab) error {
			_, err := l.env.cli.ContainerUnpause(ctx, l.server.GetContainerID(), client.ContainerUnpauseOptions{})
			return err
		},
	},
	{
		name: "stop", doneEffect: "stopped (the peer gone), then started again",
		do: func(ctx context.Context, l *ctrLab) error {
			grace := 2 * time.Second
			return l.server.Stop(ctx, &grace)
		},
		undo: func(ctx context.Context, l *ctrLab) error { return l.server.Start(ctx) },
	},
	{
		name: "disconnect", doneEffect: "disconnected from the network, then connected again",
		do: func(ctx context.Context, l *ctrLab) error {
			_, err := l.env.cli.NetworkDisconnect(ctx, l.env.nw.ID, client.NetworkDisconnectOptions{Container: l.server.GetContainerID(), Force: true})
			return err
		},
		undo: func(ctx context.Context, l *ctrLab) error {
			_, err := l.env.cli.NetworkConnect(ctx, l.env.nw.ID, client.NetworkConnectOptions{
				Container: l.server.GetContainerID(),
				EndpointConfig: &network.EndpointSettings{
					Aliases:    []string{l.alias("server")},
					IPAMConfig: &network.EndpointIPAMConfig{IPv4Address: l.serverIP},
				},
			})
			return err
		},
	},
	{
		name: "one-way", doneEffect: "cut one way (the server no longer hears the client)", direction: OutageUp,
		do:   func(ctx context.Context, l *ctrLab) error { return l.putLink(ctx, `{"uplink_down": true}`) },
		undo: func(ctx context.Context, l *ctrLab) error { return l.putLink(ctx, `{"uplink_down": false}`) },
	},
}

// putLink changes l's link through its control API.
func (l *ctrLab) putLink(ctx context.Context, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, l.linkCtrl+"/link", strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("PUT /link %s: %s: %s", body, resp.Status, b)
	}
	return nil
}

// ctrEnv is one tunnel kind's topologies in a run, and what they share.
type ctrEnv struct {
	cli    *testcontainers.DockerClient
	nw     *labNetwork
	image  string
	runID  string
	logger *tcLogger
	spec   Spec
	offset int // its topologies' first fixed address (staticAddr)
	labs   []*ctrLab
}

// kind names e's tunnel: wireguard or openvpn.
func (e *ctrEnv) kind() string { return cmp.Or(e.spec.Tunnel.Kind, TunnelWireGuard) }

func (e *ctrEnv) openvpn() bool { return e.spec.Tunnel.Kind == TunnelOpenVPN }

// device is the VPN container's tunnel device: wireguard-go's wg0, or
// openvpn's tun0.
func (e *ctrEnv) device() string {
	if e.openvpn() {
		return harness.OpenVPNDevice
	}
	return vpnDevice
}

// prefix sets the OpenVPN topologies' names apart from the WireGuard
// ones of the same configuration on the shared network.
func (e *ctrEnv) prefix() string {
	if e.openvpn() {
		return "ovpn-"
	}
	return ""
}

// ctrLab is one configuration's topology.
type ctrLab struct {
	env      *ctrEnv
	cfg      ConfigSpec
	index    int
	prefix   string // of its containers' names and aliases
	device   string // the VPN's tunnel device
	serverIP netip.Addr
	server   testcontainers.Container
	link     testcontainers.Container
	pod      testcontainers.Container // holds the namespace the others join
	vpnCtr   testcontainers.Container // the VPN client on its device
	sidecar  testcontainers.Container // tunnelprobe serve
	load     testcontainers.Container
	linkCtrl string // http://address:port of the link's control API
	health   string // address:port of the sidecar's health server, on the pod's address
	logs     *healthLog
	vpn      *vpnContainer
	vpnLog   *lineLog // the VPN container's output: its device's ifindex at each start

	mu      sync.Mutex
	rec     *recorder
	applied []time.Duration // when each fault was in place, from the run's start
	undone  []time.Duration // when each fault was undone, from the run's start
}

func (l *ctrLab) alias(role string) string { return role + "-" + l.prefix + l.cfg.Name }

func (l *ctrLab) recorder() *recorder {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec
}

// faultTimes returns when each fault was in place and when each was
// undone for l so far, from the run's start.
func (l *ctrLab) faultTimes() (applied, undone []time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.applied), slices.Clone(l.undone)
}

// inPlace returns spec with its outages where Docker had l's faults in
// place, from the call that put each in place returning to the one that
// undid it: the windows l's configuration is timed against. The first
// placed outages are so; the rest, never put in place and undone, keep
// their schedule.
func (l *ctrLab) inPlace(spec Spec) (_ Spec, placed int) {
	applied, undone := l.faultTimes()
	spec.Link.Outages = slices.Clone(spec.Link.Outages)
	placed = min(len(applied), len(undone), len(spec.Link.Outages))
	for i := range placed {
		spec.Link.Outages[i].Start = D(applied[i])
		spec.Link.Outages[i].Duration = D(undone[i] - applied[i])
	}
	return spec, placed
}

// TestContainerScenarios runs beside TestLoadedRuns, which waits until its
// topologies have had their loaded phase (markContainersLoading): most of
// its minutes are spent waiting out the faults.
func TestContainerScenarios(t *testing.T) {
	loaded := markContainersLoading(t)
	t.Parallel()
	cli := needDocker(t)
	needKernelTUN(t)
	began := time.Now()
	required := os.Getenv(requireDockerEnv) == "1"
	suites := []Spec{containerSuite(), openvpnContainerSuite()}
	for _, s := range suites {
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if err := suites[1].Tunnel.Available(); err != nil {
		if required {
			t.Fatalf("%s=1 but the OpenVPN containers cannot run: %v", requireDockerEnv, err)
		}
		t.Logf("the OpenVPN topologies cannot run here, so WireGuard's run alone: %v", err)
		suites = suites[:1]
	}
	// Stop in time for the cleanups to run: a test binary killed by -timeout
	// would leave every container behind (there is no reaper).
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Minute))
		t.Cleanup(cancel)
	}
	runID := fmt.Sprintf("%s-%04x", began.Format("20060102-150405"), rand.IntN(1<<16))
	// The image carries openvpn where this machine has it to copy.
	image := buildImage(ctx, t, cli, newTCLogger(t), runID, len(suites) > 1)
	var starved []string
	for run := 1; run <= 2; run++ {
		if d, ok := ctx.Deadline(); ok && time.Until(d) < suites[0].Duration.Duration+2*time.Minute {
			if run == 1 {
				t.Fatalf("no time left for a run of %v before the test's deadline (go test -timeout)", suites[0].Duration)
			}
			starved = append(starved, "no time left to run it again before the test's deadline (go test -timeout)")
			break
		}
		t.Run(fmt.Sprintf("run %d", run), func(t *testing.T) {
			starved = runContainerSuites(ctx, t, cli, image, fmt.Sprintf("%s-%d", runID, run), suites, loaded)
		})
		if t.Failed() || len(starved) == 0 {
			t.Logf("container scenarios took %v in all", time.Since(began).Round(time.Second))
			return
		}
	}
	msg := "the machine held the run too long to judge the health servers, and it could not be judged on a second: " + strings.Join(starved, "; ")
	if required {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// runContainerSuites starts every topology of suites on a network of their
// own, runs them side by side under one schedule, writes each kind's
// results and judges them. It calls loaded once the loaded phase is over.
// It returns what held the machine when the run was too starved to judge,
// and then judges nothing.
func runContainerSuites(ctx context.Context, t *testing.T, cli *testcontainers.DockerClient, image, runID string, suites []Spec, loaded func()) (starved []string) {
	began := time.Now()
	nw := newLabNetwork(ctx, t)
	t.Logf("network %s (%s), image %s", nw.Name, nw.subnet, image)
	var envs []*ctrEnv
	offset := 0
	for _, spec := range suites {
		e := &ctrEnv{cli: cli, nw: nw, image: image, runID: runID, logger: newTCLogger(t), spec: spec, offset: offset}
		for i, c := range spec.Configs {
			e.labs = append(e.labs, &ctrLab{env: e, cfg: c, index: i, prefix: e.prefix(), device: e.device(),
				serverIP: nw.staticAddr(offset + i), logs: newHealthLog()})
		}
		offset += len(spec.Configs)
		envs = append(envs, e)
	}
	// The topologies start and load their links with the machine's turn
	// (package exclusive), which they give back when the first fault is
	// due: from then on they mostly wait.
	release, err := exclusive.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	markLoaded := loaded
	loaded = sync.OnceFunc(func() { release(); markLoaded() })
	// Cleanups are registered as each container is created, before any use,
	// from these goroutines; a failure stops the test once all returned.
	var g errgroup.Group
	for _, e := range envs {
		for _, l := range e.labs {
			g.Go(func() error { return e.startTopology(ctx, t, l) })
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d topologies up in %v", offset, time.Since(began).Round(time.Second))

	reps, stall, err := runTopologies(ctx, t, envs, loaded)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cmp.Or(os.Getenv("TUNNELPROBE_RESULTS_DIR"), os.TempDir()), "tunnelprobe-containers-"+runID)
	for i, e := range envs {
		out := dir
		if e.openvpn() {
			out = filepath.Join(dir, e.kind())
		}
		if err := reps[i].WriteResults(out); err != nil {
			t.Fatal(err)
		}
		var table strings.Builder
		_ = reps[i].WriteTable(&table)
		t.Logf("%s: results in %s (report.md, report.json, timeline.png)\n%s", e.kind(), out, table.String())
		for _, l := range e.labs {
			l.vpn.mu.Lock()
			t.Logf("%s %s: %d container restarts: %s", e.kind(), l.cfg.Name, len(l.vpn.restarts), strings.Join(l.vpn.restarts, "; "))
			l.vpn.mu.Unlock()
		}
	}
	if starved = starvation(envs, reps, stall); len(starved) > 0 {
		t.Logf("too starved to judge, so not judged:\n  %s", strings.Join(starved, "\n  "))
		return starved
	}
	for i, e := range envs {
		t.Run(e.kind(), func(t *testing.T) {
			for _, l := range e.labs {
				j, err := l.judgement(ctx, reps[i])
				if err != nil {
					t.Errorf("%s: %v", l.cfg.Name, err)
					continue
				}
				j.judge(t)
				if c := reps[i].Configs[l.cfg.Name]; !c.OutageDetected && t.Failed() {
					t.Logf("%s: the health server's last log lines:\n%s", l.cfg.Name, l.logs.lastLines())
				}
			}
		})
	}
	return nil
}

// runTopologies drives the spec over every topology at once: the loads, the
// kubelets, the faults, the link counters; then measures each kind's, each
// configuration against its own faults as Docker had them in place. It
// calls loaded when the first fault is due. It returns a report per kind
// and the longest this process could not run.
func runTopologies(ctx context.Context, t *testing.T, envs []*ctrEnv, loaded func()) ([]*Report, time.Duration, error) {
	spec := envs[0].spec // the kinds share the schedule
	var labs []*ctrLab
	for _, e := range envs {
		labs = append(labs, e.labs...)
	}
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
	stalled := make(chan time.Duration, 1)
	go func() { stalled <- watchStalls(runCtx) }()
	windows := make([]window, len(labs))
	g, gctx := errgroup.WithContext(runCtx)
	for i, l := range labs {
		g.Go(func() error { return l.startLoad(gctx, t) })
		g.Go(func() error { return l.probe(gctx) })
		g.Go(func() error { windows[i] = l.measureWindow(gctx, start); return nil })
	}
	g.Go(func() error {
		defer loaded()
		return driveFaults(gctx, t, labs, faults, start, loaded)
	})
	err := g.Wait()
	cancel()
	stall := <-stalled
	if ctx.Err() != nil {
		return nil, stall, fmt.Errorf("the run did not finish (the test's deadline): %w", ctx.Err())
	} else if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return nil, stall, err
	}

	var reps []*Report
	i := 0
	for _, e := range envs {
		rep := &Report{
			Name: e.spec.Name, Seed: e.spec.Seed, Started: start, DurationSeconds: time.Since(start).Seconds(),
			PeakRSSBytes: peakrss.Bytes(), StalledSeconds: stall.Seconds(), Spec: e.spec, Configs: map[string]ConfigReport{},
		}
		for _, l := range e.labs {
			load, loadErr := l.readLoad(ctx)
			spec, placed := l.inPlace(e.spec)
			cr := measure(spec, l.cfg, l.rec.timeline(), load, start, windows[i])
			for j := range min(placed, len(cr.Outages)) {
				cr.Outages[j].InPlace = true
			}
			if loadErr != nil {
				cr.LoadError = loadErr.Error()
			}
			rep.Configs[l.cfg.Name] = cr
			rep.Order = append(rep.Order, l.cfg.Name)
			i++
		}
		reps = append(reps, rep)
	}
	return reps, stall, nil
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

// The pod's addresses: the VPN's tunnel device, its control API (the
// heal's), and where the server peer's services are through the tunnel.
const (
	vpnDevice  = "wg0"
	vpnControl = "127.0.0.1:8000"
	// vpnAPIKey is what the VPN's control API asks of every request, as
	// gluetun's apikey role does: a heal that does not send it fails.
	vpnAPIKey = "lab-key"
)

var tunnelServer = harness.ServerTunnelAddr.String()

// startTopology starts the server, the link and the pod of l: its holder,
// the VPN container and the health sidecar.
func (e *ctrEnv) startTopology(ctx context.Context, t *testing.T, l *ctrLab) error {
	// The server writes its CA into a volume the sidecar reads it from: on
	// WireGuard a new one at every start, on OpenVPN with the lab's files,
	// which it keeps, and the VPN container reads its client.ovpn there.
	// Removed after the containers (cleanups run last registered first).
	volume := fmt.Sprintf("tunnelprobe-%s-%s", e.runID, l.alias("ca"))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := e.cli.VolumeRemove(ctx, volume, client.VolumeRemoveOptions{Force: true})
		if err != nil && !strings.Contains(err.Error(), "no such volume") {
			t.Errorf("remove volume %s: %v", volume, err)
		}
	})
	ends, err := e.tunnelEnds(l)
	if err != nil {
		return err
	}
	req := e.request(l, "server", ends.server...)
	req.Files = ends.serverFiles
	req.Mounts = testcontainers.ContainerMounts{testcontainers.VolumeMount(volume, "/ca")}
	req.EndpointSettingsModifier = func(m map[string]*network.EndpointSettings) {
		if s := m[e.nw.Name]; s != nil {
			s.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: l.serverIP}
		}
	}
	if e.openvpn() {
		req.HostConfigModifier = kernelTUN
	}
	req.WaitingFor = wait.ForLog("sink ").WithStartupTimeout(time.Minute)
	if l.server, err = e.start(ctx, t, req); err != nil {
		return err
	}

	link := e.spec.Link
	req = e.request(l, "link", "lab", "link", "--listen", "0.0.0.0:"+ends.linkPort, "--server", l.alias("server")+":"+ends.serverPort,
		"--rate", link.Rate.String(), "--delay", link.Delay.String(), "--queue", link.Queue.String(),
		"--seed", strconv.FormatUint(e.spec.Seed+uint64(l.index), 10), "--control", "0.0.0.0:"+linkControl)
	req.WaitingFor = wait.ForLog("control http://").WithStartupTimeout(time.Minute)
	if l.link, err = e.start(ctx, t, req); err != nil {
		return err
	}
	ip, err := l.link.ContainerIP(ctx)
	if err != nil {
		return err
	}
	l.linkCtrl = "http://" + ip + ":" + linkControl

	// The pod: its holder owns the network namespace, and so the address
	// the kubelet probes, as a pod's sandbox does (the kubelet probes the
	// pod's address, through no port proxy); the others join it, and the
	// address outlives their restarts.
	req = e.request(l, "pod", "lab", "pause")
	if l.pod, err = e.start(ctx, t, req); err != nil {
		return err
	}
	if ip, err = l.pod.ContainerIP(ctx); err != nil {
		return err
	}
	l.health = ip + ":" + healthPort

	// The VPN container (kernelTUN).
	l.vpnLog = newLineLog(l.device)
	req = e.inPod(l, "vpn", ends.vpn...)
	req.Files = ends.vpnFiles
	if e.openvpn() {
		req.Mounts = testcontainers.ContainerMounts{{Source: testcontainers.GenericVolumeMountSource{Name: volume}, Target: "/ca", ReadOnly: true}}
	}
	req.HostConfigModifier = e.joinPod(l, kernelTUN)
	req.LogConsumerCfg = &testcontainers.LogConsumerConfig{Consumers: []testcontainers.LogConsumer{l.vpnLog}}
	req.WaitingFor = wait.ForLog("tun " + l.device + " ifindex ").WithStartupTimeout(time.Minute)
	if l.vpnCtr, err = e.start(ctx, t, req); err != nil {
		return fmt.Errorf("the VPN container on a kernel TUN device: %w\n%s", err, l.vpnLog.String())
	}

	// The health sidecar: tunnelprobe serve in the pod's namespace, its
	// check through the tunnel device by the kernel's routes, its evidence
	// from that device.
	args := append([]string{"serve", "--listen", "0.0.0.0:" + healthPort, "--target", "tls://" + tunnelServer + ":443"}, sidecarFlags(l.cfg.Health, l.device)...)
	if l.cfg.Name == "compose" {
		if args, err = composeServeArgs(l.device); err != nil {
			return err
		}
	}
	args = append(args, "--tls-ca", ends.caFile, "--log-format", "json", "--log-level", "debug")
	req = e.inPod(l, "health", args...)
	req.Mounts = testcontainers.ContainerMounts{{Source: testcontainers.GenericVolumeMountSource{Name: volume}, Target: "/ca", ReadOnly: true}}
	req.HostConfigModifier = e.joinPod(l, nil)
	req.LogConsumerCfg = &testcontainers.LogConsumerConfig{
		Opts:      []testcontainers.LogProductionOption{testcontainers.WithLogProductionTimeout(time.Minute)},
		Consumers: []testcontainers.LogConsumer{l.logs},
	}
	req.WaitingFor = wait.ForLog("serving health endpoints").WithStartupTimeout(time.Minute)
	if l.sidecar, err = e.start(ctx, t, req); err != nil {
		return err
	}
	l.vpn = &vpnContainer{name: l.alias("vpn"), ctr: l.vpnCtr, log: l.vpnLog, rec: l.recorder, grace: prober.MinGracePeriod, started: time.Now()}
	return nil
}

// tunnelEnds are the commands and files of a topology's server and VPN
// containers, the ports of the server and of the link in front of it, and
// where the sidecar finds the TLS target's CA.
type tunnelEnds struct {
	server, vpn           []string
	serverFiles, vpnFiles []testcontainers.ContainerFile
	linkPort, serverPort  string
	caFile                string
}

// tunnelEnds returns l's ends: on WireGuard the lab's peers with keys of
// their own, on OpenVPN the real openvpn at both ends with the files the
// server writes into the volume (/ca), the client.ovpn's remote the link.
func (e *ctrEnv) tunnelEnds(l *ctrLab) (tunnelEnds, error) {
	if e.openvpn() {
		port := strconv.Itoa(harness.OpenVPNPort)
		return tunnelEnds{
			server:   []string{"lab", "server", "--openvpn", "/ca", "--remote", l.alias("link") + ":" + port},
			vpn:      []string{"lab", "client", "--openvpn", "/ca", "--control", vpnControl, "--control-key", vpnAPIKey},
			linkPort: port, serverPort: port, caFile: "/ca/ca.crt",
		}, nil
	}
	serverKey, err := harness.GenerateKey()
	if err != nil {
		return tunnelEnds{}, err
	}
	clientKey, err := harness.GenerateKey()
	if err != nil {
		return tunnelEnds{}, err
	}
	keyFile := func(k harness.Key, path string) testcontainers.ContainerFile {
		return testcontainers.ContainerFile{Reader: strings.NewReader(k.String() + "\n"), ContainerFilePath: path, FileMode: 0o600}
	}
	return tunnelEnds{
		server: []string{"lab", "server", "--listen", "0.0.0.0:51820", "--key", "/lab/server.key",
			"--peer", clientKey.Public().String(), "--ca-out", "/ca/ca.pem"},
		vpn: []string{"lab", "client", "--tun", vpnDevice, "--listen", "0.0.0.0:0", "--endpoint", l.alias("link") + ":51821",
			"--key", "/lab/client.key", "--peer", serverKey.Public().String(), "--control", vpnControl, "--control-key", vpnAPIKey},
		serverFiles: []testcontainers.ContainerFile{keyFile(serverKey, "/lab/server.key")},
		vpnFiles:    []testcontainers.ContainerFile{keyFile(clientKey, "/lab/client.key")},
		linkPort:    "51821", serverPort: "51820", caFile: "/ca/ca.pem",
	}, nil
}

// kernelTUN lets a container make kernel TUN devices (root, NET_ADMIN and
// /dev/net/tun), as the upstream VPN image runs: the VPN must make its
// device, there is no fallback; so does an OpenVPN server.
func kernelTUN(hc *dockercontainer.HostConfig) {
	hc.CapAdd = []string{"NET_ADMIN"}
	hc.Devices = []dockercontainer.DeviceMapping{{PathOnHost: "/dev/net/tun", PathInContainer: "/dev/net/tun", CgroupPermissions: "rwm"}}
}

// composeServeArgs returns the command of deploy/compose's health service,
// pointed at the lab: its targets at the server peer through the tunnel,
// its tunnel interface wg0, its API key the lab's (the lab's control API
// takes gluetun's requests and checks the key as gluetun does).
func composeServeArgs(device string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join("..", "deploy", "compose", "compose.yaml"))
	if err != nil {
		return nil, err
	}
	var cf struct {
		Services map[string]struct {
			Command []string `yaml:"command"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &cf); err != nil {
		return nil, fmt.Errorf("deploy/compose/compose.yaml: %w", err)
	}
	args := cf.Services["health"].Command
	if len(args) == 0 || args[0] != "serve" {
		return nil, fmt.Errorf("deploy/compose/compose.yaml: the health service's command %q is not serve's", args)
	}
	lab := strings.NewReplacer("1.1.1.1", tunnelServer, "${GLUETUN_API_KEY:?set it in .env}", vpnAPIKey)
	out := make([]string, len(args))
	for i, a := range args {
		if out[i] = lab.Replace(a); a == "tun0" {
			out[i] = device
		}
	}
	if !slices.Contains(out, "PUT http://"+vpnControl+`/v1/vpn/status {"status":"stopped"}`) {
		return nil, fmt.Errorf("deploy/compose/compose.yaml: the health service's command %q does not heal through the VPN's control API at %s", args, vpnControl)
	}
	return out, nil
}

// inPod returns the request of a container that joins l's pod: no network
// of its own (joinPod sets the mode).
func (e *ctrEnv) inPod(l *ctrLab, role string, cmd ...string) testcontainers.ContainerRequest {
	req := e.request(l, role, cmd...)
	req.Networks, req.NetworkAliases = nil, nil
	return req
}

// joinPod returns a host configuration modifier that puts the container in
// the network namespace of l's pod holder, then applies more (if set).
func (e *ctrEnv) joinPod(l *ctrLab, more func(*dockercontainer.HostConfig)) func(*dockercontainer.HostConfig) {
	return func(hc *dockercontainer.HostConfig) {
		hc.NetworkMode = dockercontainer.NetworkMode("container:" + l.pod.GetContainerID())
		if more != nil {
			more(hc)
		}
	}
}

// sidecarFlags are the health sidecar's serve flags for h: its heal is
// the VPN client's own control API restarting the tunnel; its evidence the
// light probe of the server peer through wg0 and wg0's counters.
func sidecarFlags(h HealthSpec, device string) []string {
	var f []string
	if h.Heal {
		f = append(f, "--heal-http", "POST http://"+vpnControl+"/restart", "--heal-header", "X-API-Key: "+vpnAPIKey)
	}
	if h.Preset != "" {
		// The upstream's small check echoes the server peer, as it echoes
		// 1.1.1.1 through a real tunnel.
		return append(f, "--preset", h.Preset, "--echo-target", tunnelServer, "--dns-server", tunnelServer)
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
		f = append(f, "--light-probe", "icmp://"+tunnelServer, "--evidence-iface", device)
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

// startLoad starts l's load container in the pod: greedy connections to
// the server's sink through the tunnel by the kernel's routes, from the
// start of the run until the first fault.
func (l *ctrLab) startLoad(ctx context.Context, t *testing.T) error {
	e := l.env
	hold := e.spec.workingEnd() - e.spec.Load.Ramp.Duration
	req := e.inPod(l, "load", "load", "--target", tunnelServer+":"+strconv.Itoa(harness.SinkPort),
		"--conns", strconv.Itoa(e.spec.Load.Conns), "--ramp", e.spec.Load.Ramp.String(),
		"--duration", hold.String(), "--rate", "greedy", "--json", "/lab/load.json")
	req.HostConfigModifier = e.joinPod(l, nil)
	ctr, err := e.start(ctx, t, req)
	l.load = ctr
	return err
}

// readLoad reads the load's results once its container has exited.
func (l *ctrLab) readLoad(ctx context.Context) (loadgen.Result, error) {
	if l.load == nil {
		return loadgen.Result{}, fmt.Errorf("no load container")
	}
	// The load ends by itself at the end of its --duration; the bound is
	// a safety net only.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	wait := l.env.cli.ContainerWait(wctx, l.load.GetContainerID(), client.ContainerWaitOptions{Condition: dockercontainer.WaitConditionNotRunning})
	select {
	case r := <-wait.Result:
		if r.StatusCode != 0 {
			return l.decodeLoad(ctx, fmt.Errorf("load exited with %d", r.StatusCode))
		}
		return l.decodeLoad(ctx, nil)
	case err := <-wait.Error:
		return loadgen.Result{}, fmt.Errorf("waiting for the load to end: %w", err)
	}
}

func (l *ctrLab) decodeLoad(ctx context.Context, exitErr error) (loadgen.Result, error) {
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

// probe runs the prober against l's health sidecar, by its pod's address,
// until ctx ends.
func (l *ctrLab) probe(ctx context.Context) error {
	spec := l.env.spec
	run, err := newProber(l.cfg.Prober, l.health, rand.New(rand.NewPCG(spec.Seed, uint64(l.env.offset+l.index))), l.recorder(), l.vpn)
	if err != nil {
		return fmt.Errorf("%s: prober: %w", l.cfg.Name, err)
	}
	if err := run(ctx); err != nil && ctx.Err() == nil {
		return fmt.Errorf("%s: prober: %w", l.cfg.Name, err)
	}
	return nil
}

// measureWindow reads the link's byte counters once the load has settled
// and again just before the first fault. The server container's sink
// counters are out of reach, and the load's own byte counts are not what
// arrived (hundreds of connections buffer megabytes along the way): the
// link's uplink, what it carried towards the sink (WireGuard and TCP
// overhead and retransmissions included), stands for the sink's bytes;
// link bytes are both directions, as in the in-process runner. Each read
// is tried again for up to linkReadFor; the window runs between the reads
// that answered, and is incomplete (not measured) when either did not.
func (l *ctrLab) measureWindow(ctx context.Context, start time.Time) window {
	spec := l.env.spec
	read := func(from time.Time) (at time.Duration, up, both int64, ok bool) {
		if !sleepUntil(ctx, from) {
			return 0, 0, 0, false
		}
		for try := time.Now(); time.Since(try) < linkReadFor; {
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			st, err := l.linkState(rctx)
			cancel()
			if err == nil {
				return time.Since(start), int64(st.Uplink.Bytes), int64(st.Uplink.Bytes + st.Downlink.Bytes), true
			}
			if !sleepUntil(ctx, time.Now().Add(200*time.Millisecond)) {
				break
			}
		}
		return 0, 0, 0, false
	}
	w := window{from: spec.Load.Ramp.Duration + ctrSettle, to: spec.workingEnd()}
	from, u0, l0, ok0 := read(start.Add(w.from))
	to, u1, l1, ok1 := read(start.Add(w.to - linkReadFor))
	if ok0 && ok1 {
		w.from, w.to = from, to
		w.sinkBytes, w.linkBytes, w.complete = u1-u0, l1-l0, true
	}
	return w
}

// linkReadFor is how long a read of a link's counters is tried for.
const linkReadFor = 3 * time.Second

// linkState reads l's link through its control API.
func (l *ctrLab) linkState(ctx context.Context) (harness.LinkState, error) {
	var st harness.LinkState
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.linkCtrl+"/link", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /link: %s", resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// driveFaults does and undoes each fault to every topology at the times of
// the spec's outage windows, and notes when each was in place and undone.
// It calls loaded when the first is due. A fault that could not be done
// everywhere is undone where it was, and its error (a Docker call's, or
// its minute running out) is never taken for the run's end.
func driveFaults(ctx context.Context, t *testing.T, labs []*ctrLab, faults []fault, start time.Time, loaded func()) error {
	each := func(labs []*ctrLab, what string, undo bool, f func(context.Context, *ctrLab) error) error {
		// Undoing must finish even at the end of the run.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		var g errgroup.Group
		for _, l := range labs {
			g.Go(func() error {
				if err := f(fctx, l); err != nil {
					return fmt.Errorf("%s: %s: %w", l.alias("server"), what, err)
				}
				l.mu.Lock()
				if undo {
					l.undone = append(l.undone, time.Since(start))
				} else {
					l.applied = append(l.applied, time.Since(start))
				}
				l.mu.Unlock()
				l.recorder().note("server " + what)
				return nil
			})
		}
		return g.Wait()
	}
	for i, w := range labs[0].env.spec.Link.Outages {
		f := faults[i]
		if !sleepUntil(ctx, start.Add(w.Start.Duration)) {
			return nil
		}
		loaded()
		t.Logf("%5.1fs fault %d: servers %s", time.Since(start).Seconds(), i+1, f.doneEffect)
		if err := each(labs, f.name, false, f.do); err != nil {
			done := slices.DeleteFunc(slices.Clone(labs), func(l *ctrLab) bool { a, _ := l.faultTimes(); return len(a) <= i })
			return fmt.Errorf("fault %d: %v (undone where it was done: %v)", i+1, err, each(done, "un"+f.name, true, f.undo))
		}
		sleepUntil(ctx, start.Add(w.End()))
		if err := each(labs, "un"+f.name, true, f.undo); err != nil {
			return fmt.Errorf("fault %d: %v", i+1, err)
		}
		t.Logf("%5.1fs fault %d over", time.Since(start).Seconds(), i+1)
	}
	return nil
}

// A fault that could not be done everywhere is undone where it was done,
// and its error ends the run as a failure, even one that ran out of time
// (a context's error, which the run's own end also is).
func TestFaultNotDoneEverywhere(t *testing.T) {
	spec := containerSuite()
	start := time.Now().Add(-spec.Link.Outages[0].Start.Duration) // the first fault is due
	var labs []*ctrLab
	for _, name := range []string{"a", "b"} {
		labs = append(labs, &ctrLab{env: &ctrEnv{spec: spec}, cfg: ConfigSpec{Name: name}, rec: newRecorder(start)})
	}
	undone := map[string]int{}
	var mu sync.Mutex
	stuck := []fault{{
		name: "pause",
		do: func(_ context.Context, l *ctrLab) error {
			if l.cfg.Name == "b" {
				return fmt.Errorf("docker pause: %w", context.DeadlineExceeded)
			}
			return nil
		},
		undo: func(_ context.Context, l *ctrLab) error {
			mu.Lock()
			defer mu.Unlock()
			undone[l.cfg.Name]++
			return nil
		},
	}}
	err := driveFaults(t.Context(), t, labs, stuck, start, func() {})
	if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "fault 1") {
		t.Errorf("driveFaults: %v; want fault 1's error, not one the run's end could be taken for", err)
	}
	if undone["a"] != 1 || undone["b"] != 0 {
		t.Errorf("undone %v; want a's fault undone, and b, which never had it, left alone", undone)
	}
}
