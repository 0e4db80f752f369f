package scenarios

// Docker plumbing of the container scenarios (containers_test.go): the
// daemon check, the image, the network, the health server's logs and the
// kubelet's view of a container.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"

	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// requireDockerEnv names the variable that turns a missing daemon from a
// skip into a failure (CI sets it).
const requireDockerEnv = "TUNNELPROBE_REQUIRE_DOCKER"

// needDocker skips t where no Docker daemon answers, or fails it when
// TUNNELPROBE_REQUIRE_DOCKER=1. It also skips under -short unless required.
// It returns a Docker client, closed when t ends. (TestMain has set
// testcontainers' environment: setTestcontainersEnv.)
func needDocker(t *testing.T) *testcontainers.DockerClient {
	t.Helper()
	required := os.Getenv(requireDockerEnv) == "1"
	if testing.Short() && !required {
		t.Skip("container scenarios take minutes; skipped with -short (set " + requireDockerEnv + "=1 to run them)")
	}
	if !required {
		testcontainers.SkipIfProviderIsNotHealthy(t)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err == nil {
		if _, err = cli.Ping(ctx, client.PingOptions{}); err != nil {
			cli.Close()
		}
	}
	switch {
	case err != nil && required:
		t.Fatalf("%s=1 but no Docker daemon answers: %v", requireDockerEnv, err)
	case err != nil:
		t.Skipf("no Docker daemon answers: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// setTestcontainersEnv sets what environment.md asks for, unless set
// otherwise: no reaper (it would be pulled; every cleanup here is
// registered instead), and on a machine that is itself a container, the
// daemon's ports on localhost. testcontainers reads its configuration once,
// at its first use, in a test: TestMain calls this before any runs.
func setTestcontainersEnv() {
	if _, ok := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !ok {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	if _, err := os.Stat("/.dockerenv"); err == nil && os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		os.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "localhost")
	}
}

// tcLogger routes testcontainers' own messages to the test log while the
// test runs, and drops them afterwards (its goroutines may outlive a test,
// and t.Logf then panics).
type tcLogger struct {
	t    *testing.T
	done atomic.Bool
}

func newTCLogger(t *testing.T) *tcLogger {
	l := &tcLogger{t: t}
	t.Cleanup(func() { l.done.Store(true) })
	return l
}

func (l *tcLogger) Printf(format string, v ...any) {
	if !l.done.Load() && testing.Verbose() {
		l.t.Logf("testcontainers: "+format, v...)
	}
}

var _ tclog.Logger = (*tcLogger)(nil)

// buildImage builds the tunnelprobe binary statically and the image FROM
// scratch around it (scenarios/testdata/docker/Dockerfile, with an empty
// /lab for the roles' files and, withOpenVPN, this machine's openvpn and
// its shared libraries), once for the whole test, and removes the image
// when t ends. Nothing is pulled.
func buildImage(ctx context.Context, t *testing.T, cli *testcontainers.DockerClient, logger tclog.Logger, runID string, withOpenVPN bool) string {
	t.Helper()
	return buildStaticImage(ctx, t, cli, logger, "tunnelprobe-scenarios:"+runID, filepath.Join("testdata", "docker", "Dockerfile"),
		func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "lab"), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "lab", "README"), []byte("key files and outputs of tunnelprobe lab\n"), 0o644); err != nil {
				return err
			}
			// The Dockerfile copies this tree whole: a /tmp, which openvpn's
			// server asks for (its --tmp-dir), and openvpn if wanted.
			root := filepath.Join(dir, "openvpn")
			if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o755); err != nil {
				return err
			}
			if err := os.Chmod(filepath.Join(root, "tmp"), 0o777|os.ModeSticky); err != nil || !withOpenVPN {
				return err
			}
			return copyProgram(ctx, root, "openvpn")
		})
}

// copyProgram copies the program name (found in PATH) and every shared
// library the dynamic loader gives it here (ldd), the loader included, to
// the same paths under root: a dynamically linked program for an image
// FROM scratch, taken from this machine instead of a registry.
func copyProgram(ctx context.Context, root, name string) error {
	bin, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "ldd", bin).Output()
	if err != nil {
		return fmt.Errorf("ldd %s: %w", bin, err)
	}
	files := []string{"/usr/sbin/" + name}
	src := map[string]string{files[0]: bin}
	for line := range strings.Lines(string(out)) {
		// "libx.so.1 => /lib/.../libx.so.1 (0x...)", "/lib64/ld-linux-x86-64.so.2 (0x...)";
		// the vDSO has no file.
		f := strings.Fields(line)
		if i := slices.Index(f, "=>"); i >= 0 && i+1 < len(f) {
			f = f[i+1:]
		}
		if len(f) > 0 && strings.HasPrefix(f[0], "/") {
			files = append(files, f[0])
			src[f[0]] = f[0]
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(src[f]) // through symbolic links: scratch has none
		if err != nil {
			return err
		}
		dst := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// buildStaticImage builds image (repo:tag) from dockerfile with the
// statically linked tunnelprobe binary beside it, as the root Dockerfile's
// two commands do, after prepare (if set) adds to the build context. The
// image is removed when t ends.
func buildStaticImage(ctx context.Context, t *testing.T, cli *testcontainers.DockerClient, logger tclog.Logger,
	image, dockerfile string, prepare func(dir string) error,
) string {
	t.Helper()
	dir := t.TempDir()
	df, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), df, 0o644); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		if err := prepare(dir); err != nil {
			t.Fatal(err)
		}
	}
	begin := time.Now()
	// Built as the README builds it (CGO_ENABLED=0, no -trimpath), so that
	// the compiled packages are shared with cmd/tunnelprobe's tests and
	// the README's blocks; -ldflags only changes the link.
	build := exec.CommandContext(ctx, "go", "build", "-ldflags", "-s -w",
		"-o", filepath.Join(dir, "tunnelprobe"), "github.com/tunnelprobe/tunnelprobe/cmd/tunnelprobe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("static binary built in %v", time.Since(begin).Round(time.Millisecond))

	repo, tag, _ := strings.Cut(image, ":")
	// Registered before the build, so that a failed or interrupted build
	// leaves nothing either.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := cli.ImageRemove(ctx, image, client.ImageRemoveOptions{Force: true, PruneChildren: true})
		if err != nil && !strings.Contains(err.Error(), "No such image") {
			t.Errorf("remove image %s: %v", image, err)
		}
	})
	provider, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	defer provider.Close()
	var buildLog bytes.Buffer
	begin = time.Now()
	req := testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		Context: dir, Dockerfile: "Dockerfile", Repo: repo, Tag: tag,
		// The image may serve several containers; the cleanup above
		// removes it once.
		KeepImage:      true,
		BuildLogWriter: &buildLog,
	}}
	if _, err := provider.BuildImage(ctx, &req); err != nil {
		t.Fatalf("build image: %v\n%s", err, buildLog.String())
	}
	t.Logf("image %s built in %v", image, time.Since(begin).Round(time.Millisecond))
	return image
}

// labNetwork is the user-defined network the containers share. It has a
// subnet of its own so that each server peer keeps a fixed address when
// stopped and started or disconnected and connected again: the link
// resolved the server's name once, as a NAT or a peer configured with an
// address would. Dynamic addresses come from the upper half only.
type labNetwork struct {
	*testcontainers.DockerNetwork
	subnet netip.Prefix
}

func newLabNetwork(ctx context.Context, t *testing.T) *labNetwork {
	t.Helper()
	var lastErr error
	for range 8 {
		// 10.200.0.0/16 and up: clear of Docker's default pools
		// (172.17-31, 192.168) and of the usual LANs.
		subnet := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(200 + rand.IntN(50)), byte(rand.IntN(256)), 0}), 24)
		a := subnet.Addr().As4()
		a[3] = 128
		upper := netip.PrefixFrom(netip.AddrFrom4(a), 25)
		nw, err := tcnetwork.New(ctx, tcnetwork.WithIPAM(&network.IPAM{
			Driver: "default",
			Config: []network.IPAMConfig{{Subnet: subnet, IPRange: upper}},
		}))
		testcontainers.CleanupNetwork(t, nw)
		if err == nil {
			return &labNetwork{DockerNetwork: nw, subnet: subnet}
		}
		lastErr = err
	}
	t.Fatalf("create network: %v", lastErr)
	return nil
}

// staticAddr returns the i-th fixed address of the network's lower half.
func (n *labNetwork) staticAddr(i int) netip.Addr {
	a := n.subnet.Addr().As4()
	a[3] = byte(10 + i)
	return netip.AddrFrom4(a)
}

// healthLog reads the client container's health server from its JSON logs
// (--log-format json --log-level debug) into a recorder: checks, state
// changes and heals, as the in-process runner's observer does.
//
// testcontainers replays a container's whole log when the container starts
// again; entries older than the newest one handled are dropped. slog stamps
// milliseconds, so entries of the newest millisecond are told apart by
// their text.
type healthLog struct {
	rec atomic.Pointer[recorder] // nil until the run starts; earlier entries are ignored

	mu      sync.Mutex
	partial map[string][]byte // per stream: a line not yet complete
	last    time.Time
	atLast  map[string]bool
	tail    []string // the last raw lines, for failure messages
}

func newHealthLog() *healthLog {
	return &healthLog{partial: map[string][]byte{}, atLast: map[string]bool{}}
}

var _ testcontainers.LogConsumer = (*healthLog)(nil)

// Accept implements testcontainers.LogConsumer. It is called from the log
// production goroutine.
func (h *healthLog) Accept(l testcontainers.Log) {
	h.mu.Lock()
	defer h.mu.Unlock()
	buf := append(h.partial[l.LogType], l.Content...)
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		h.line(string(buf[:i]))
		buf = buf[i+1:]
	}
	h.partial[l.LogType] = append([]byte(nil), buf...)
}

// logEntry is the part of a slog JSON line that matters here.
type logEntry struct {
	Time      time.Time `json:"time"`
	Msg       string    `json:"msg"`
	Source    string    `json:"source"`
	Duration  int64     `json:"duration"` // slog writes a time.Duration in nanoseconds
	To        string    `json:"to"`
	DecidedBy string    `json:"decided_by"`
}

func (h *healthLog) line(s string) {
	var e logEntry
	if !strings.HasPrefix(s, "{") || json.Unmarshal([]byte(s), &e) != nil || e.Time.IsZero() {
		h.keep(s)
		return
	}
	switch {
	case e.Time.Before(h.last):
		return // a replay
	case e.Time.Equal(h.last):
		if h.atLast[s] {
			return
		}
	default:
		h.last = e.Time
		clear(h.atLast)
	}
	h.atLast[s] = true
	h.keep(s)
	r := h.rec.Load()
	if r == nil || e.Time.Before(r.start) {
		return
	}
	d := time.Duration(e.Duration)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Msg {
	case "check passed", "check failed":
		r.tl.Checks = append(r.tl.Checks, CheckMark{
			At: r.at(e.Time.Add(-d)), Latency: ms(d), Passed: e.Msg == "check passed", Source: e.Source, DecidedBy: e.DecidedBy,
		})
	case "health state changed":
		r.tl.States = append(r.tl.States, StateMark{At: r.at(e.Time), To: e.To})
	case "healed", "heal failed":
		r.tl.Heals = append(r.tl.Heals, r.at(e.Time.Add(-d)))
	}
}

func (h *healthLog) keep(s string) {
	const n = 40
	h.tail = append(h.tail, s)
	if len(h.tail) > n {
		h.tail = h.tail[len(h.tail)-n:]
	}
}

func (h *healthLog) lastLines() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.tail, "\n")
}

// vpnContainer is the VPN container as the kubelet sees it: a restart
// stops the container for real (SIGTERM, the kill's grace period), waits
// the crash back-off and starts it again in the pod's namespace, where the
// health sidecar goes on serving at the pod's address.
type vpnContainer struct {
	name    string
	ctr     testcontainers.Container
	log     *lineLog // the container's output, which names each start's wg0
	rec     func() *recorder
	grace   time.Duration
	backoff prober.CrashBackoff

	mu       sync.Mutex
	n        int
	started  time.Time
	restarts []string        // what each restart did, for the log
	stops    []time.Duration // how long each restart's stop took
	lives    []life          // the incarnation each restart started (not the first, the test's own start)
	downs    []life          // each restart's stop to its start serving (to zero while it is down)
}

// life is one incarnation of the VPN container: from a start to the stop
// of the next restart (zero while it runs).
type life struct{ from, to time.Time }

var _ prober.Container = (*vpnContainer)(nil)

func (c *vpnContainer) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%s/%d", c.name, c.n)
}

func (c *vpnContainer) StartedAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

func (c *vpnContainer) Restart(ctx context.Context, reason string) error {
	grace := c.grace
	begin := time.Now()
	// The stop completes even when ctx ends meanwhile: a half-done stop
	// would leave the container in no known state.
	if err := c.ctr.Stop(context.WithoutCancel(ctx), &grace); err != nil {
		return fmt.Errorf("stop %s: %w", c.name, err)
	}
	exited := time.Now()
	c.mu.Lock()
	c.downs = append(c.downs, life{from: begin})
	c.stops = append(c.stops, exited.Sub(begin))
	if n := len(c.lives); n > 0 {
		c.lives[n-1].to = begin
	}
	c.mu.Unlock()
	if r := c.rec(); r != nil {
		r.note(c.name + " container stopped: " + reason)
	}
	delay := c.backoff.Next(exited)
	if !sleepUntil(ctx, exited.Add(delay)) {
		return ctx.Err()
	}
	// The request's wait strategy is met at once by the log of the last
	// start, which testcontainers replays: wait for this start's new wg0
	// instead, so that its life is stamped from when the device exists.
	devices := len(c.log.ifindexes())
	if err := c.ctr.Start(ctx); err != nil {
		return fmt.Errorf("start %s: %w", c.name, err)
	}
	c.log.waitIfindexes(ctx, devices+1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.started = time.Now()
	c.downs[len(c.downs)-1].to = c.started
	c.lives = append(c.lives, life{from: c.started})
	c.restarts = append(c.restarts, fmt.Sprintf("stopped in %v, back-off %v, serving again after %v",
		exited.Sub(begin).Round(time.Millisecond), delay, time.Since(begin).Round(time.Millisecond)))
	return nil
}

// lineLog keeps a container's output. testcontainers replays the whole log
// at each start, so what matters is read as distinct lines.
type lineLog struct {
	device string // the tunnel device whose indexes it reads

	mu   sync.Mutex
	buf  strings.Builder
	grew chan struct{} // told of each Accept; one waiter at a time
}

func newLineLog(device string) *lineLog {
	return &lineLog{device: device, grew: make(chan struct{}, 1)}
}

var _ testcontainers.LogConsumer = (*lineLog)(nil)

func (l *lineLog) Accept(log testcontainers.Log) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(log.Content)
	select {
	case l.grew <- struct{}{}:
	default:
	}
}

// waitIfindexes waits until the log holds n distinct interface indexes, or
// ctx ends, and says which.
func (l *lineLog) waitIfindexes(ctx context.Context, n int) bool {
	for len(l.ifindexes()) < n {
		select {
		case <-l.grew:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// ifindexes returns the distinct interface indexes the VPN container
// printed ("tun wg0 ifindex N", or tun0's), one per start, in order.
func (l *lineLog) ifindexes() []string {
	var seen []string
	for line := range strings.Lines(l.String()) {
		if i, ok := strings.CutPrefix(strings.TrimSpace(line), "tun "+l.device+" ifindex "); ok && !slices.Contains(seen, i) {
			seen = append(seen, i)
		}
	}
	return seen
}

// needKernelTUN fails t under TUNNELPROBE_REQUIRE_DOCKER=1, or skips it,
// where the Docker host has no /dev/net/tun for the VPN containers: the
// suite runs the deployed topology or nothing, never a fallback.
func needKernelTUN(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		if os.Getenv(requireDockerEnv) == "1" {
			t.Fatalf("%s=1 but no kernel TUN device can be had for the VPN containers: %v", requireDockerEnv, err)
		}
		t.Skipf("no kernel TUN device for the VPN containers: %v", err)
	}
}

// copyOut reads a file from a (possibly exited) container.
func copyOut(ctx context.Context, ctr testcontainers.Container, path string) ([]byte, error) {
	rc, err := ctr.CopyFileFromContainer(ctx, path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(bufio.NewReader(rc))
}
