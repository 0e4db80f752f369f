package scenarios

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// openvpnRuns are TestLoadedRuns' runs through the real openvpn.
var openvpnRuns = []loadedRun{
	{"RunOpenVPNEvidence", testRunOpenVPNEvidence},
	{"RunOpenVPNFollowsAKilledClient", testRunOpenVPNFollowsAKilledClient},
	{"RunOpenVPNServerExitFailsTheRun", testRunOpenVPNServerExitFailsTheRun},
	{"RunOpenVPNInterruptedLeavesNothing", testRunOpenVPNInterruptedLeavesNothing},
}

// openvpnSpec is a short loaded run through the real openvpn over
// transport, evidence its one configuration, with outages of every
// shape: the uplink, the downlink, then both ways; far enough apart for
// the kubelet's crash back-off (10 s, then 20 s) to have restarted the
// container before the next.
func openvpnSpec(t *testing.T, transport string) Spec {
	t.Helper()
	if err := harness.OpenVPNAvailable(""); err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	spec := shortSpec("openvpn-"+transport, 1, 100*time.Second, 256, []Window{
		{Start: D(20 * time.Second), Duration: D(12 * time.Second), Direction: OutageUp},
		{Start: D(50 * time.Second), Duration: D(12 * time.Second), Direction: OutageDown},
		{Start: D(85 * time.Second), Duration: D(12 * time.Second)},
	}, LoadSpec{Conns: 200, Ramp: D(5 * time.Second)},
		ConfigSpec{Name: "evidence", Health: evidenceHealth(), Prober: evidenceProber(5 * time.Second)})
	spec.Tunnel = TunnelSpec{Kind: TunnelOpenVPN, Transport: transport}
	return spec
}

// On OpenVPN over UDP, loaded, evidence detects every outage within 10 s
// and restarts nothing while the link works; over TCP, which carries no
// bound (TCP over TCP: the matrix's openvpn-tcp measures it), the load
// crosses and the figures of a shorter run with no outage are logged.
func testRunOpenVPNEvidence(t *testing.T) {
	for _, transport := range []string{harness.TransportUDP, harness.TransportTCP} {
		t.Run(transport, func(t *testing.T) {
			spec := openvpnSpec(t, transport)
			if transport != harness.TransportUDP {
				spec.Duration, spec.Link.Outages = D(30*time.Second), nil
			}
			rep, err := Run(t.Context(), spec, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ev := rep.Configs["evidence"]
			if ev.Failed != "" {
				t.Fatalf("not measured: %s", ev.Failed)
			}
			t.Logf("%s: false restarts %d, false heals %d, utilisation %s, conns %d",
				transport, ev.FalseRestarts, ev.FalseHeals, fmtShare(ev.Utilisation), ev.ConnsAchieved)
			for _, o := range ev.Outages {
				t.Logf("outage %s at %.0fs: detected in %s", o.Direction, o.Start, seconds(o.DetectionSeconds))
			}
			if ev.ConnsAchieved != 200 {
				t.Errorf("%d of 200 connections through openvpn", ev.ConnsAchieved)
			}
			if transport != harness.TransportUDP {
				return
			}
			if ev.FalseRestarts != 0 || ev.FalseHeals != 0 {
				t.Errorf("false restarts %d, heals %d on a working link", ev.FalseRestarts, ev.FalseHeals)
			}
			if !ev.OutageDetected || ev.DetectionSeconds == nil || *ev.DetectionSeconds > 10 {
				t.Errorf("slowest detection %s: want every outage detected within 10 s", seconds(ev.DetectionSeconds))
			}
		})
	}
}

func seconds(s *float64) string {
	if s == nil {
		return "never"
	}
	return strconv.FormatFloat(*s, 'f', 1, 64) + "s"
}

// A VPN client killed mid-run restarts its container (a crash, counted
// apart from the prober's restarts), and the health server follows the
// new process's tun0: its checks pass again.
func testRunOpenVPNFollowsAKilledClient(t *testing.T) {
	spec := openvpnSpec(t, harness.TransportUDP)
	spec.Duration, spec.Link.Outages, spec.Load.Conns = D(30*time.Second), nil, 20
	killed := netnstest.KillOpenVPNOnce(t.Context(), 12*time.Second, "client.ovpn")
	rep, err := Run(t.Context(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, ok := <-killed
	if !ok {
		t.Fatal("no openvpn client to kill")
	}
	tl := rep.Configs["evidence"].Timeline
	if len(tl.Crashes) != 1 {
		t.Fatalf("crashes %v after killing openvpn %d: want one", tl.Crashes, k.PID)
	}
	passedAfter := false
	for _, c := range tl.Checks {
		passedAfter = passedAfter || c.At > tl.Crashes[0]+3 && c.Passed
	}
	if !passedAfter {
		t.Errorf("no check passed after the crash at %.1fs: the health server did not follow the new tun0", float64(tl.Crashes[0]))
	}
}

// The lab's VPN server exiting mid-run fails the run: what follows would
// be no measurement.
func testRunOpenVPNServerExitFailsTheRun(t *testing.T) {
	spec := openvpnSpec(t, harness.TransportUDP)
	spec.Duration, spec.Link.Outages, spec.Load.Conns = D(20*time.Second), nil, 20
	killed := netnstest.KillOpenVPNOnce(t.Context(), 8*time.Second, "server.conf")
	rep, err := Run(t.Context(), spec, Options{})
	if _, ok := <-killed; !ok {
		t.Fatal("no openvpn server to kill")
	}
	if err == nil || !strings.Contains(err.Error(), "VPN server exited") {
		t.Errorf("Run returned %v (report %v), want the server's exit as its error", err, rep != nil)
	}
}

// An interrupted run leaves nothing behind: no openvpn process, and no
// network namespace of its labs (their tun0 and veth devices go with
// them).
func testRunOpenVPNInterruptedLeavesNothing(t *testing.T) {
	spec := openvpnSpec(t, harness.TransportTCP)
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	var seen []netnstest.OpenVPNProcess
	stop := time.AfterFunc(15*time.Second, func() {
		mu.Lock()
		seen = netnstest.OpenVPNChildren()
		mu.Unlock()
		cancel()
	})
	defer stop.Stop()
	rep, err := Run(ctx, spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted {
		t.Error("the run is not marked interrupted")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("%d openvpn processes mid-run, want a client and a server", len(seen))
	}
	var pids []int
	var namespaces []string
	for _, k := range seen {
		pids, namespaces = append(pids, k.PID), append(namespaces, k.NS)
	}
	netnstest.AssertGone(t, pids, namespaces)
}

// An exit that a restart has overtaken restarts nothing more: the client's
// openvpn died, the prober restarted the container before the exit was
// acted on, and the old process's exit finds the new client running.
func TestStaleClientExitRestartsNothing(t *testing.T) {
	spec := openvpnSpec(t, harness.TransportUDP)
	tr, err := newTrial(t.Context(), spec, spec.Configs[0], 0, harness.Buffers{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	tr.start, tr.rec = time.Now(), newRecorder(time.Now())
	c := &container{t: tr, backoff: prober.CrashBackoff{Initial: time.Millisecond, Max: time.Millisecond}}
	if err := c.up(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer c.down()
	e := tr.lab.(exiter)
	if err := syscall.Kill(e.ClientPID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	exit := <-e.Exits()
	if err := c.Restart(t.Context(), "the prober's"); err != nil {
		t.Fatal(err)
	}
	id, pid := c.ID(), e.ClientPID()
	if err := c.restartAfterExit(t.Context(), e, exit); err != nil {
		t.Fatal(err)
	}
	if c.ID() != id || e.ClientPID() != pid {
		t.Errorf("container %s, client %d after the stale exit; want %s, %d: restarted again", c.ID(), e.ClientPID(), id, pid)
	}
}
