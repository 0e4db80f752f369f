package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
)

// startOpenVPN starts an OpenVPN lab for the test, or skips where it
// cannot run (fails under TUNNELPROBE_REQUIRE_DOCKER=1, as in CI).
func startOpenVPNLab(t *testing.T, cfg OpenVPNConfig) *OpenVPN {
	t.Helper()
	if err := OpenVPNAvailable(cfg.Binary); err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	o := NewOpenVPN(cfg)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := o.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := o.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return o
}

// waitFor calls f until it succeeds or a minute passes.
func waitFor(t *testing.T, what string, f func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var err error
	for ctx.Err() == nil {
		tctx, tcancel := context.WithTimeout(ctx, 2*time.Second)
		err = f(tctx)
		tcancel()
		if err == nil {
			return
		}
	}
	t.Fatalf("%s: %v", what, err)
}

func TestOpenVPNCarriesTheLabsTargets(t *testing.T) {
	for _, transport := range []string{TransportUDP, TransportTCP} {
		t.Run(transport, func(t *testing.T) {
			o := startOpenVPNLab(t, OpenVPNConfig{Transport: transport, Link: Settings{Rate: 50_000_000, Delay: 5 * time.Millisecond}})
			ctx := t.Context()
			before, err := o.ReadCounters()
			if err != nil {
				t.Fatal(err)
			}
			if err := o.TLSCheck().Check(ctx); err != nil {
				t.Fatalf("TLS check through the tunnel: %v", err)
			}
			if err := o.SmallCheck().Check(ctx); err != nil {
				t.Fatalf("small check (ICMP, DNS) through the tunnel: %v", err)
			}
			if err := o.LightProbe().Check.Check(ctx); err != nil {
				t.Fatalf("light probe: %v", err)
			}
			// 1 MiB there and back through the echo target: everything
			// crossed both ways once the last byte is back.
			conn, err := o.DialContext(ctx, "tcp", netip.AddrPortFrom(ServerTunnelAddr, EchoPort).String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			wrote := make(chan error, 1)
			go func() { _, err := conn.Write(make([]byte, 1<<20)); wrote <- err }()
			if _, err := io.ReadFull(conn, make([]byte, 1<<20)); err != nil {
				t.Fatal(err)
			}
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
			d, err := o.ReadDelivery()
			if err != nil || len(d) == 0 {
				t.Errorf("delivery of the connection through tun0: %v, %v", d, err)
			}
			after, err := o.ReadCounters()
			if err != nil {
				t.Fatal(err)
			}
			if after.TxBytes-before.TxBytes < 1<<20 {
				t.Errorf("tun0 sent %d bytes for a 1 MiB write", after.TxBytes-before.TxBytes)
			}
			if st := o.Link().Stats(); st.Uplink.Bytes < 1<<20 {
				t.Errorf("the link carried %d bytes up: the transport did not cross it", st.Uplink.Bytes)
			}
		})
	}
}

// clientTUNIndex is the interface index of the client's tun0.
func clientTUNIndex(t *testing.T, o *OpenVPN) int {
	t.Helper()
	var idx int
	err := o.client.Do(func() error {
		l, err := netlink.LinkByName(OpenVPNDevice)
		if err == nil {
			idx = l.Attrs().Index
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func TestOpenVPNKilledClientIsReportedAndFollowed(t *testing.T) {
	// Fast: the link gives the new process a new port towards the server,
	// or the server would hold its session back for half a minute.
	o := startOpenVPNLab(t, OpenVPNConfig{})
	old := clientTUNIndex(t, o)
	pid := o.ClientPID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-o.Exits():
		t.Logf("exit reported: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the killed client's exit was not reported")
	}
	if o.ClientPID() != 0 {
		t.Error("a client whose process died is still up")
	}
	if err := o.TLSCheck().Check(t.Context()); err == nil {
		t.Error("a check passed with the client's openvpn dead")
	}
	if err := o.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "TLS check after the new client came up", o.TLSCheck().Check)
	if now := clientTUNIndex(t, o); now == old {
		t.Errorf("tun0 is still interface %d: the new process made no new device", now)
	}
	select {
	case err := <-o.Exits():
		t.Errorf("an exit reported that Up caused: %v", err)
	default:
	}
}

func TestOpenVPNRestartBreaksFlowsAndComesBack(t *testing.T) {
	o := startOpenVPNLab(t, OpenVPNConfig{Transport: TransportTCP})
	conn, err := o.DialContext(t.Context(), "tcp", netip.AddrPortFrom(ServerTunnelAddr, EchoPort).String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := o.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The old flow went with the old tun0: its writes and reads fail, or
	// its echo never comes back, within a check's time.
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	_, werr := conn.Write([]byte("x"))
	_, rerr := conn.Read(make([]byte, 1))
	if werr == nil && rerr == nil {
		t.Error("a flow through the old tun0 survived the restart")
	}
	waitFor(t, "TLS check after the restart", o.TLSCheck().Check)
	select {
	case err := <-o.Exits():
		t.Errorf("a restart reported as an exit: %v", err)
	default:
	}
}

func TestOpenVPNOutageFailsTheLightProbeUntilItEnds(t *testing.T) {
	for _, transport := range []string{TransportUDP, TransportTCP} {
		t.Run(transport, func(t *testing.T) {
			o := startOpenVPNLab(t, OpenVPNConfig{Transport: transport})
			probe := o.LightProbe().Check
			for _, oneWay := range []func(*Settings){
				func(s *Settings) { s.Down = true },
				func(s *Settings) { s.DownlinkDown = true },
				func(s *Settings) { s.UplinkDown = true },
			} {
				if err := o.Link().Update(oneWay); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				err := probe.Check(ctx)
				cancel()
				if err == nil {
					t.Fatalf("light probe answered through a link that is %s", o.Link().Settings())
				}
				if err := o.Link().Update(func(s *Settings) { *s = Settings{} }); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "light probe after the outage", probe.Check)
			}
		})
	}
}

// namespaceOf is the network namespace of process pid ("net:[inode]").
func namespaceOf(t *testing.T, pid int) string {
	t.Helper()
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func TestOpenVPNCloseLeavesNothingBehind(t *testing.T) {
	if err := OpenVPNAvailable(""); err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	o := NewOpenVPN(OpenVPNConfig{Transport: TransportTCP})
	if err := o.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	pids := []int{o.ClientPID(), o.srv.PID()}
	namespaces := []string{namespaceOf(t, pids[0]), namespaceOf(t, pids[1])}
	dir := o.dir.path
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	netnstest.AssertGone(t, pids, namespaces)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the lab's files are still in %s (%v)", dir, err)
	}
}

func TestOpenVPNThatNeverConnectsFailsStartAndLeavesNothing(t *testing.T) {
	if err := OpenVPNAvailable(""); err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	// The link is down from the start: the client's openvpn runs, but
	// never connects.
	o := NewOpenVPN(OpenVPNConfig{Link: Settings{Down: true}, StartTimeout: 3 * time.Second})
	err := o.Start(t.Context())
	if err == nil {
		o.Close()
		t.Fatal("Start succeeded over a dead link")
	}
	if !strings.Contains(err.Error(), "client") || !strings.Contains(err.Error(), "last output") {
		t.Errorf("the error %q does not say which end failed and what openvpn printed", err)
	}
	if o.cl.PID() != 0 {
		t.Errorf("the failed start left its client process (%d)", o.cl.PID())
	}
	if o.dir != nil && exists(o.dir.path) {
		t.Errorf("the failed start left its files in %s", o.dir.path)
	}
}

// The server's openvpn exiting on its own is reported: the lab's far side
// is gone for good.
func TestOpenVPNServerExitIsReported(t *testing.T) {
	o := startOpenVPNLab(t, OpenVPNConfig{})
	if err := syscall.Kill(o.srv.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-o.ServerExits():
		if !strings.Contains(err.Error(), "killed") {
			t.Errorf("the server's exit says %q, not how it ended", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the killed server's exit was not reported")
	}
}

// Dials through the OpenVPN lab hold no OS thread while they connect: a
// hundred dials to a tunnel address nobody answers, all waiting in
// SYN-SENT, leave the process's thread count about as it was (a dial in
// the namespace's locked thread held one each), and end with their
// context.
func TestOpenVPNDialsHoldNoThreadWhileConnecting(t *testing.T) {
	o := startOpenVPNLab(t, OpenVPNConfig{})
	const dials = 100
	before := threads(t)
	ctx, cancel := context.WithCancel(t.Context())
	errs := make(chan error, dials)
	for range dials {
		go func() {
			c, err := o.DialContext(ctx, "tcp", "10.99.0.77:9") // in the tunnel's /24, no peer there
			if c != nil {
				c.Close()
			}
			errs <- err
		}()
	}
	synSent := func() int {
		n := 0
		_ = o.client.Do(func() error {
			b, err := os.ReadFile("/proc/thread-self/net/tcp")
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) > 3 && f[3] == "02" { // TCP_SYN_SENT
					n++
				}
			}
			return err
		})
		return n
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for synSent() < dials {
		select {
		case err := <-errs:
			t.Fatalf("a dial ended before the others were waiting: %v", err)
		case <-tick.C:
		}
	}
	if during := threads(t); during > before+dials/2 {
		t.Errorf("%d threads while %d dials connect, %d before: the dials hold threads", during, dials, before)
	}
	cancel()
	for range dials {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled dial says %v", err)
		}
	}
}

// threads is this process's number of OS threads.
func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads line in /proc/self/status")
	return 0
}
