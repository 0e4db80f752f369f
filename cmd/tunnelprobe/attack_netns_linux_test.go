package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/internal/syncbuf"
)

var (
	// binaryDir is where TestMain lets tests build the binary.
	binaryDir  string
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
	binaryOut  []byte
)

// builtBinary builds tunnelprobe once per test process, without the race
// detector, for tests that run it as a separate process (in a namespace,
// or for minutes), and returns its path.
func builtBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		binaryPath = filepath.Join(binaryDir, "tunnelprobe")
		// Static, as the README and the container image build it: the
		// compiled packages are then shared with theirs.
		build := exec.Command("go", "build", "-o", binaryPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		binaryOut, binaryErr = build.CombinedOutput()
	})
	if binaryErr != nil {
		t.Fatalf("go build: %v\n%s", binaryErr, binaryOut)
	}
	return binaryPath
}

// farSide is two network namespaces joined by a veth pair: near (where the
// health server runs, 10.77.0.1 on "vnear") and far (10.77.0.2), the
// tunnel's far side an attacker controls.
type farSide struct {
	near, far string
}

func newFarSide(t *testing.T) farSide {
	t.Helper()
	f := farSide{near: netnstest.New(t, "near"), far: netnstest.New(t, "far")}
	netnstest.Veth(t, f.near, f.far, "vnear", "vfar", "10.77.0.1/24", "10.77.0.2/24")
	return f
}

// serve runs the built binary's serve in the near namespace with args, and
// returns a client that reaches it there.
func (f farSide) serve(t *testing.T, args ...string) *nsServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	args = append([]string{"netns", "exec", f.near, builtBinary(t), "serve", "--listen", "127.0.0.1:0", "--mode", "probe"}, args...)
	cmd := exec.CommandContext(ctx, "ip", args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("serve's log:\n%s", logs.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	_, addr, ok := strings.Cut(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("serve did not start: %q %v", line, err)
	}
	go io.Copy(io.Discard, stdout) // keeps the pipe drained; ends when Wait closes it
	s := &nsServer{addr: addr}
	s.client = &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
			var c net.Conn
			var err error
			if nsErr := netnstest.Do(f.near, func() { c, err = (&net.Dialer{}).DialContext(ctx, network, a) }); nsErr != nil {
				return nil, nsErr
			}
			return c, err
		},
	}}
	return s
}

type nsServer struct {
	addr   string
	client *http.Client
}

// check asks /check/ for JSON and returns the HTTP status and how the
// check was decided.
func (s *nsServer) check(t *testing.T) (code int, decidedBy, output string) {
	t.Helper()
	resp, err := s.client.Get("http://" + s.addr + "/check/?format=json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Checks map[string][]struct{ DecidedBy, Output string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	c := body.Checks["tunnel:connectivity"]
	if len(c) == 0 {
		return resp.StatusCode, "", ""
	}
	return resp.StatusCode, c[0].DecidedBy, c[0].Output
}

// get asks path and returns the HTTP status and the body.
func (s *nsServer) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := s.client.Get("http://" + s.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// neverPasses asks /check/ n times, a second apart, as a prober would
// while the attack goes on in real time, and fails t on any pass.
func (s *nsServer) neverPasses(t *testing.T, what string, n int) {
	t.Helper()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := range n {
		if code, by, out := s.check(t); code == http.StatusOK {
			t.Fatalf("%s: check %d passed (%s: %s)", what, i+1, by, out)
		}
		<-tick.C
	}
}

// farListener accepts TCP connections on the far side at addr (and closes
// them), until the returned func stops it.
func (f farSide) farListener(t *testing.T, addr string) (stop func()) {
	t.Helper()
	return f.serveFar(t, addr, func(net.Conn) {})
}

// serveFar accepts TCP connections on the far side at addr and hands each
// to handle in a goroutine of its own, until the returned func (or the
// test's end) stops it and closes every connection, then waits for them.
func (f farSide) serveFar(t *testing.T, addr string, handle func(net.Conn)) (stop func()) {
	t.Helper()
	var ln net.Listener
	var err error
	netnstest.Run(t, f.far, func() { ln, err = net.Listen("tcp", addr) })
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { handle(c) })
		}
	})
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ln.Close()
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}

// untilFails asks /check/ until it fails, for 15 s at most, and returns
// how it was decided.
func (s *nsServer) untilFails(t *testing.T) (decidedBy, output string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, by, out := s.check(t)
		if code != http.StatusOK {
			return by, out
		}
		if time.Now().After(deadline) {
			t.Fatalf("still passing after 15 s: %s %q", by, out)
		}
	}
}

// The attacks that fooled traffic counters, on real kernel interfaces: the
// far side's answer to a rejected dial, traffic that only comes in, an
// interface renamed away and back. None may pass a check; with a light
// probe that was answered while the tunnel worked, each fails on the
// missing answers.
func TestAttacksOnEvidenceInNamespaces(t *testing.T) {
	f := newFarSide(t)

	t.Run("the reply to a rejected dial", func(t *testing.T) {
		// Nothing listens on the far side's port 9: every dial is answered
		// by a reset.
		s := f.serve(t, "--check", "tcp", "--target", "10.77.0.2:9", "--failure-threshold", "3", "--evidence-iface", "vnear")
		s.neverPasses(t, "counters only", 6)
		// With a light probe: answered while the far side accepts, then
		// the far side resets the probes too, as a VPN server with a dead
		// uplink answers what it cannot deliver.
		stop := f.farListener(t, "10.77.0.2:443")
		p := f.serve(t, "--check", "tcp", "--target", "10.77.0.2:9", "--evidence-iface", "vnear", "--light-probe", "tcp://10.77.0.2:443")
		if code, by, out := p.waitPass(t); code != http.StatusOK || by != "light-probe" {
			t.Fatalf("while the far side answers: %d %s %q", code, by, out)
		}
		stop()
		if by, out := p.untilFails(t); by != "light-probe" || !strings.Contains(out, "no proof of life") {
			t.Errorf("resets only: %s %q, want no proof of life", by, out)
		}
		p.neverPasses(t, "resets only", 5)
	})

	t.Run("inbound only", func(t *testing.T) {
		stop := f.farListener(t, "10.77.0.2:443")
		defer stop()
		s := f.serve(t, "--check", "tcp", "--target", "10.77.0.2:443", "--timeout", "2s", "--evidence-iface", "vnear", "--light-probe", "tcp://10.77.0.2:443")
		if code, by, out := s.waitPass(t); code != http.StatusOK || by != "light-probe" {
			t.Fatalf("before the attack: %d %s %q", code, by, out)
		}
		// From now on nothing the near side sends reaches anyone: the far
		// side gives up the address the near side sends to (a route
		// around it, even a blackhole, would not stop a probe bound to
		// its interface), and sends UDP in from another one.
		netnstest.IP(t, "-n", f.far, "addr", "del", "10.77.0.2/24", "dev", "vfar")
		netnstest.IP(t, "-n", f.far, "addr", "add", "10.77.0.3/24", "dev", "vfar")
		var conn net.Conn
		var err error
		netnstest.Run(t, f.far, func() {
			d := net.Dialer{LocalAddr: &net.UDPAddr{IP: net.IPv4(10, 77, 0, 3)}}
			conn, err = d.Dial("udp", "10.77.0.1:5004")
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, stopFlood := context.WithCancel(context.Background())
		var flood sync.WaitGroup
		flood.Go(func() {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					_, _ = conn.Write(make([]byte, 1000))
				}
			}
		})
		t.Cleanup(func() { stopFlood(); flood.Wait(); conn.Close() })
		if by, out := s.untilFails(t); by != "light-probe" || !strings.Contains(out, "no proof of life") {
			t.Errorf("inbound only: %s %q, want no proof of life", by, out)
		}
		s.neverPasses(t, "inbound only", 5)
	})

	t.Run("an interface renamed away and back", func(t *testing.T) {
		s := f.serve(t, "--check", "tcp", "--target", "10.77.0.2:9", "--evidence-iface", "vnear")
		// Traffic on the interface, then it goes away and comes back.
		s.neverPasses(t, "before", 2)
		netnstest.IP(t, "-n", f.near, "link", "set", "vnear", "down")
		netnstest.IP(t, "-n", f.near, "link", "set", "vnear", "name", "vgone")
		s.neverPasses(t, "while it is away", 2)
		netnstest.IP(t, "-n", f.near, "link", "set", "vgone", "name", "vnear")
		netnstest.IP(t, "-n", f.near, "link", "set", "vnear", "up")
		s.neverPasses(t, "after it came back", 5)
	})
}

// waitPass asks /check/ until the light probe's answer passes it, for 15 s
// at most, and returns the last answer.
func (s *nsServer) waitPass(t *testing.T) (code int, decidedBy, output string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, decidedBy, output = s.check(t)
		if code == http.StatusOK && decidedBy == "light-probe" || time.Now().After(deadline) {
			return code, decidedBy, output
		}
	}
}
