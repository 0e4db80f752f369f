package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
)

// uplink gives the near side a second way to the far side, vup
// (10.78.0.1 to 10.78.0.2), as a host's own uplink beside its tunnel.
func (f farSide) uplink(t *testing.T) {
	t.Helper()
	netnstest.Veth(t, f.near, f.far, "vup", "vupfar", "10.78.0.1/24", "10.78.0.2/24")
}

// stallingListener accepts TCP connections on the far side at addr and
// holds them without a byte, as a path that carries SYNs and small
// packets but not the data a TLS handshake needs, until the test ends.
func (f farSide) stallingListener(t *testing.T, addr string) {
	t.Helper()
	f.serveFar(t, addr, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}

// With the tunnel's interface named, the active check goes through it or
// fails: a tunnel that is down fails the check although the host's own
// uplink still reaches the target, and the answers name the interface.
func TestServeChecksGoThroughTheTunnel(t *testing.T) {
	f := newFarSide(t)
	f.uplink(t)
	f.farListener(t, ":8443")
	s := f.serve(t, "--bind-iface", "vnear", "--check", "tcp", "--target", "10.77.0.2:8443")
	if code, body := s.get(t, "/check/"); code != http.StatusOK || body != "pass [via vnear]\n" {
		t.Fatalf("through the tunnel: %d %q", code, body)
	}
	if _, js := s.get(t, "/check/?format=json"); !strings.Contains(js, `"componentId": "vnear"`) {
		t.Errorf("JSON does not name the interface:\n%s", js)
	}
	// The tunnel goes down; the host's uplink still routes to the target.
	netnstest.IP(t, "-n", f.near, "link", "set", "vnear", "down")
	netnstest.IP(t, "-n", f.near, "route", "add", "10.77.0.2/32", "via", "10.78.0.2", "dev", "vup")
	unbound := f.serve(t, "--check", "tcp", "--target", "10.77.0.2:8443")
	if code, body := unbound.get(t, "/check/"); code != http.StatusOK {
		t.Fatalf("unbound, by the uplink: %d %q; the test's second route does not work", code, body)
	}
	code, body := s.get(t, "/check/")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "vnear") {
		t.Errorf("bound, tunnel down: %d %q; want a failure naming vnear", code, body)
	}
}

// A probe sent bound to the tunnel's interface after the route through it
// was deleted goes out on-link and is answered: it proves nothing, the
// state says so, and the check is the active check's, which fails as the
// users' traffic does. The interface's own address is refused at start.
func TestServeDeletedRouteMakesTheProbeProveNothing(t *testing.T) {
	f := newFarSide(t)
	f.farListener(t, "10.77.0.2:8443")
	netnstest.Run(t, f.near, func() { allowPing(t) })
	s := f.serve(t, "--evidence-iface", "vnear", "--light-probe", "icmp://10.77.0.2", "--check", "tcp", "--target", "10.77.0.2:8443")
	if code, by, out := s.waitPass(t); code != http.StatusOK || by != "light-probe" {
		t.Fatalf("before: %d %s %q", code, by, out)
	}
	netnstest.IP(t, "-n", f.near, "route", "del", "10.77.0.0/24", "dev", "vnear")
	by, out := s.untilFails(t)
	if by != "active" || !strings.Contains(out, "no route through vnear to 10.77.0.2") {
		t.Errorf("route deleted: %s %q, want the active check's failure: no route through vnear", by, out)
	}
	if _, js := s.get(t, "/?format=json"); !strings.Contains(js, `"tunnel:light-probe"`) || !strings.Contains(js, "no route through vnear to 10.77.0.2") {
		t.Errorf("the status does not say why the probe proves nothing:\n%s", js)
	}
	s.neverPasses(t, "route deleted", 4)

	out2, err := exec.Command("ip", "netns", "exec", f.near, builtBinary(t), "serve", "--listen", "127.0.0.1:0",
		"--evidence-iface", "vnear", "--light-probe", "10.77.0.1").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out2), "--light-probe") || !strings.Contains(string(out2), "an address of this host's interface vnear") {
		t.Errorf("the interface's own address: exit %d, %s; want 2 naming the flag and why", code, out2)
	}
}

// A resolver that answers SERVFAIL to everything, as a VPN server's own
// resolver does when its uplink is dead, proves nothing: the udp-dns light
// probe's answers pass no check, the status says why, and the active check
// decides. The same resolver answering NXDOMAIN passes checks on the
// probe.
func TestServeServfailProvesNothing(t *testing.T) {
	f := newFarSide(t)
	var pc net.PacketConn
	var err error
	netnstest.Run(t, f.far, func() { pc, err = net.ListenPacket("udp", "10.77.0.2:53") })
	if err != nil {
		t.Fatal(err)
	}
	resolver := testnet.ServeResolver(t, pc, dnsmessage.RCodeServerFailure)
	// Nothing listens on port 9: the active check fails at once.
	s := f.serve(t, "--evidence-iface", "vnear", "--light-probe", "udp-dns://10.77.0.2", "--check", "tcp", "--target", "10.77.0.2:9")
	s.neverPasses(t, "SERVFAIL", 4)
	if _, by, out := s.check(t); by != "active" {
		t.Errorf("SERVFAIL: decided by %s (%q), want the active check", by, out)
	}
	if _, js := s.get(t, "/?format=json"); !strings.Contains(js, `"tunnel:light-probe"`) || !strings.Contains(js, "SERVFAIL") {
		t.Errorf("the status does not say why the probe proves nothing:\n%s", js)
	}
	if len(resolver.Asked()) == 0 {
		t.Fatal("no probe reached the resolver")
	}
	resolver.SetRCode(dnsmessage.RCodeNameError)
	if code, by, out := s.waitPass(t); code != http.StatusOK || by != "light-probe" {
		t.Errorf("NXDOMAIN: %d %s %q, want a pass on the probe", code, by, out)
	}
}

// A far side that answers the light probe but carries no TLS handshake
// fails checks within two full-check periods, saying so, while the probes
// are still answered.
func TestServeFullCheckCatchesWhatTheProbesMiss(t *testing.T) {
	f := newFarSide(t)
	f.stallingListener(t, "10.77.0.2:443")
	netnstest.Run(t, f.near, func() { allowPing(t) })
	const period = 3 * time.Second
	s := f.serve(t, "--evidence-iface", "vnear", "--light-probe", "icmp://10.77.0.2", "--target", "10.77.0.2:443", "--tls-insecure",
		"--timeout", "1s", "--full-check-period", period.String())
	if code, by, out := s.waitPass(t); code != http.StatusOK || by != "light-probe" {
		t.Fatalf("the probe answered: %d %s %q", code, by, out)
	}
	start := time.Now()
	by, out := s.untilFails(t)
	if by != "full-check" || !strings.Contains(out, "the tunnel answers probes but tls 10.77.0.2:443 fails") {
		t.Errorf("%s %q, want the full check's failure", by, out)
	}
	if took := time.Since(start); took > 2*period+2*time.Second {
		t.Errorf("failed after %v, want within two full-check periods (%v) and the check timeout", took.Round(100*time.Millisecond), 2*period)
	}
	if _, js := s.get(t, "/?format=json"); !strings.Contains(js, `"answered"`) || strings.Contains(js, `"answered": 0,`) {
		t.Errorf("the probes were not answered meanwhile:\n%s", js)
	}
}

// exitCode is a finished command's exit code: 0 for a nil error, -1 when
// it did not run.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	return -1
}

// allowPing opens unprivileged ICMP sockets to every group, in the
// namespace the calling thread is in (run it with netnstest.Run).
func allowPing(t *testing.T) {
	t.Helper()
	if err := os.WriteFile("/proc/sys/net/ipv4/ping_group_range", []byte("0 2147483647"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Over a far side whose MTU is lower than the tunnel interface's (a veth
// drops the bigger frames without a word, as a path that filters ICMP
// "fragmentation needed" does), the small probes are answered and the
// full-size ones are not: the answers, the JSON and the metrics give the
// path MTU and say "path MTU black hole" with both sizes; the check fails
// on it only with --fail-on-mtu.
func TestServeReportsAnMTUBlackHole(t *testing.T) {
	f := newFarSide(t)
	f.farListener(t, "10.77.0.2:8443")
	netnstest.IP(t, "-n", f.far, "link", "set", "vfar", "mtu", "1300")
	netnstest.Run(t, f.near, func() { allowPing(t) })
	args := []string{"--evidence-iface", "vnear", "--light-probe", "icmp://10.77.0.2", "--check", "tcp", "--target", "10.77.0.2:8443", "--metrics"}
	s := f.serve(t, args...)
	deadline := time.Now().Add(30 * time.Second)
	poll := time.NewTicker(250 * time.Millisecond) // as a prober asks, in real time
	defer poll.Stop()
	var body string
	for {
		var code int
		code, body = s.get(t, "/check/")
		if strings.Contains(body, "path MTU black hole") {
			if code != http.StatusOK {
				t.Errorf("without --fail-on-mtu the black hole failed the check: %d %q", code, body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no black hole reported in 30 s: %q", body)
		}
		<-poll.C
	}
	if !strings.Contains(body, "bytes answered, ") || !strings.Contains(body, "the interface's MTU is 1500") {
		t.Errorf("the black hole does not give its sizes: %q", body)
	}
	// The search halves the gap between what was answered and what was
	// not, one probe a second: it ends within about ten of them.
	for {
		_, js := s.get(t, "/?format=json")
		var st struct {
			LightProbes []struct{ PathMTU, MTU int }
		}
		if err := json.Unmarshal([]byte(js), &st); err != nil || len(st.LightProbes) != 1 {
			t.Fatalf("%v:\n%s", err, js)
		}
		if lp := st.LightProbes[0]; lp.MTU == 1500 && lp.PathMTU >= 1290 && lp.PathMTU <= 1304 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("JSON pathMTU %d, mtu %d; want about 1300 (a veth lets 4 bytes more through) and 1500:\n%s", st.LightProbes[0].PathMTU, st.LightProbes[0].MTU, js)
		}
		<-poll.C
	}
	if _, m := s.get(t, "/metrics"); !strings.Contains(m, "tunnelprobe_light_probe_mtu_black_hole{kind=\"icmp\",target=\"10.77.0.2\"} 1") ||
		!strings.Contains(m, "tunnelprobe_light_probe_path_mtu_bytes{kind=\"icmp\",target=\"10.77.0.2\"} 1") {
		t.Errorf("/metrics lacks the path MTU and the black hole")
	}

	failing := f.serve(t, append(args, "--fail-on-mtu")...)
	by, out := failing.untilFails(t)
	if by != "light-probe" || !strings.Contains(out, "path MTU black hole") {
		t.Errorf("--fail-on-mtu: %s %q, want the black hole", by, out)
	}
}

// The tunnel's users' TCP data that the far end acknowledged proves the
// tunnel alive while the far side drops the light probe (ICMP): a real
// kernel flow through the tunnel's interface passes checks, decided by
// delivery. Flows on the pod's own interface or on loopback never count,
// nor does what a flow only receives; a cut of the uplink (what the near
// side sends is dropped, the far side's data and retransmissions still
// arrive) stops the delivery counting within a window.
func TestServeDeliveryProvesTheTunnel(t *testing.T) {
	f := newFarSide(t)
	f.uplink(t) // vup stands for the pod's own interface
	netnstest.Run(t, f.far, func() {
		if err := os.WriteFile("/proc/sys/net/ipv4/icmp_echo_ignore_all", []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	netnstest.Run(t, f.near, func() { allowPing(t) })
	f.farSink(t, ":9000")
	s := f.serve(t, "--evidence-iface", "vnear", "--light-probe", "icmp://10.77.0.2", "--check", "tcp", "--target", "10.77.0.2:9", "--timeout", "1s")

	// Flows that prove nothing: the pod's own, and a download through the
	// tunnel, whose socket only receives. The far side keeps sending (and,
	// after the cut below, retransmitting) into the near side.
	f.flow(t, "10.78.0.1", "10.78.0.2:9000")
	f.farSource(t, ":9001")
	f.download(t, "10.77.0.1", "10.77.0.2:9001")
	s.neverPasses(t, "the pod interface's flow and a download through the tunnel", 3)

	// A flow through the tunnel that delivers.
	f.flow(t, "10.77.0.1", "10.77.0.2:9000")
	code, by, out := s.waitDecidedBy(t, "delivery")
	if code != http.StatusOK || !strings.Contains(out, "TCP connection(s) through the tunnel had data acknowledged") {
		t.Fatalf("a flow through the tunnel, the probe dropped: %d %s %q", code, by, out)
	}
	// The uplink is cut: nothing the near side sends leaves it.
	cmd := exec.Command("ip", "netns", "exec", f.near, "tc", "qdisc", "add", "dev", "vnear", "root", "pfifo", "limit", "0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tc: %v: %s", err, out)
	}
	cut := time.Now()
	// Until the check fails, each pass after the cut must rest on progress
	// read before it: at most a reading (1 s) after the cut, and within
	// the window (3 s). The progress's time is reckoned from what the
	// check says ("... the far end 1.2s ago"), not from when the check
	// failed, so a loaded machine's slow answers do not decide the test.
	const reading, window, slack = time.Second, 3 * time.Second, time.Second
	var passes []string
	deadline := cut.Add(15 * time.Second)
	for {
		code, by, out := s.check(t)
		answered := time.Now()
		if code != http.StatusOK {
			if by == "delivery" {
				t.Errorf("uplink cut: failed by delivery %q", out)
			}
			break
		}
		passes = append(passes, fmt.Sprintf("%v after the cut: %s %q", answered.Sub(cut).Round(100*time.Millisecond), by, out))
		ago, ok := deliveredAgo(out)
		switch {
		case by != "delivery" || !ok:
			t.Fatalf("uplink cut: passed by %s %q", by, out)
		case ago > window: // the output rounds to 100 ms
			t.Errorf("uplink cut: delivery counted progress %v old, past the window (%v)", ago, window)
		case answered.Add(-ago).After(cut.Add(reading + slack)):
			t.Errorf("uplink cut: delivery counted progress of %v after the cut: %q", answered.Add(-ago).Sub(cut).Round(100*time.Millisecond), out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("still passing 15 s after the uplink cut:\n%s", strings.Join(passes, "\n"))
		}
	}
	if t.Failed() {
		t.Logf("the checks after the cut:\n%s", strings.Join(passes, "\n"))
	}
	s.neverPasses(t, "uplink cut", 3)
}

// deliveredAgo reads how long ago a delivery verdict's progress was read,
// from its "... acknowledged by the far end 1.2s ago".
func deliveredAgo(out string) (time.Duration, bool) {
	_, after, ok := strings.Cut(out, "by the far end ")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSuffix(after, " ago"))
	return d, err == nil
}

// farSink accepts TCP connections on the far side at addr and reads what
// they send, until the test ends.
func (f farSide) farSink(t *testing.T, addr string) {
	t.Helper()
	f.serveFar(t, addr, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}

// farSource accepts TCP connections on the far side at addr and writes to
// them a little at a time, as a server of a download does, until the test
// ends or the connection fails.
func (f farSide) farSource(t *testing.T, addr string) {
	t.Helper()
	f.serveFar(t, addr, func(c net.Conn) {
		buf := make([]byte, 16<<10)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write(buf); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
		}
	})
}

// download opens, in the near namespace, a connection from local to
// remote and reads what comes, as a user's download does, until the test
// ends.
func (f farSide) download(t *testing.T, local, remote string) {
	t.Helper()
	var c net.Conn
	var err error
	netnstest.Run(t, f.near, func() {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
		c, err = d.Dial("tcp", remote)
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(io.Discard, c) })
	t.Cleanup(func() { c.Close(); wg.Wait() })
}

// flow opens, in the near namespace, a connection from local to remote and
// writes to it a little at a time, as a user's upload does, until the
// test ends.
func (f farSide) flow(t *testing.T, local, remote string) {
	t.Helper()
	var c net.Conn
	var err error
	netnstest.Run(t, f.near, func() {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err = d.Dial("tcp", remote)
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		buf := make([]byte, 16<<10)
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = c.Write(buf)
			}
		}
	})
	t.Cleanup(func() { close(done); c.Close(); wg.Wait() })
}

// waitDecidedBy asks /check/ until what decided it is by, for 15 s at
// most, and returns the last answer.
func (s *nsServer) waitDecidedBy(t *testing.T, by string) (code int, decidedBy, output string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, decidedBy, output = s.check(t)
		if decidedBy == by || time.Now().After(deadline) {
			return code, decidedBy, output
		}
	}
}
