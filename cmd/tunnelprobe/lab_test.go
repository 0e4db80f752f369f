package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/proxy"

	"github.com/tunnelprobe/tunnelprobe/harness"
)

func TestLabBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--rate", "0"}, "--rate"},
		{[]string{"--rate", "20furlongs"}, "--rate"},
		{[]string{"--delay", "-5ms"}, "--delay"},
		{[]string{"--queue", "0p"}, "--queue"},
		{[]string{"--loss", "2"}, "--loss"},
		{[]string{"--link-mtu", "100"}, "--link-mtu"},
		{[]string{"link", "--link-mtu", "70000"}, "--link-mtu"},
		{[]string{"--nope"}, "-nope"},
		{[]string{"--serve", "127.0.0.1:0", "--mode", "bogus"}, "-mode"},
		{[]string{"--timeout", "1s", "--timeouts", "2s,4s"}, "--timeouts"},
		{[]string{"link", "--rate", "0"}, "--rate"},
		{[]string{"server", "--peer", "garbage"}, "--peer"},
		{[]string{"server", "--remote", "10.0.0.1"}, "--remote"},
		{[]string{"server", "--openvpn", t.TempDir(), "--peer", "x"}, "--peer"},
		{[]string{"client", "--openvpn", t.TempDir(), "--tun", "wg0"}, "--tun"},
		{[]string{"client", "--openvpn", filepath.Join(t.TempDir(), "none")}, "--openvpn"},
	} {
		var out, errb bytes.Buffer
		code := labCommand(t.Context(), tc.args, noEnv, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.flag) {
			t.Errorf("lab %v: exit %d, stderr %q; want 2 naming %s", tc.args, code, errb.String(), tc.flag)
		}
	}
}

// lineWriter is a goroutine-safe stdout that lets a test wait for a line.
type lineWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan struct{}
}

func newLineWriter() *lineWriter { return &lineWriter{ch: make(chan struct{}, 1)} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.ch <- struct{}{}:
	default:
	}
	return w.buf.Write(p)
}

// wait returns the first match of re's group 1 once printed.
func (w *lineWriter) wait(t *testing.T, re string) string {
	t.Helper()
	return w.waitWithin(t, re, 10*time.Second)
}

// waitWithin is wait for output that may take up to d.
func (w *lineWriter) waitWithin(t *testing.T, re string, d time.Duration) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(d)
	for {
		w.mu.Lock()
		m := rx.FindStringSubmatch(w.buf.String())
		w.mu.Unlock()
		if m != nil {
			return m[1]
		}
		select {
		case <-w.ch:
		case <-deadline:
			t.Fatalf("no output matching %q", re)
		}
	}
}

// start runs runLab in a goroutine owned by the test: cleanup cancels it
// and waits for its exit code.
func start(t *testing.T, args ...string) *lineWriter {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := newLineWriter()
	var errb lineWriter
	done := make(chan int, 1)
	go func() { done <- labCommand(ctx, args, noEnv, out, &errb) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("lab %v exited %d: %s", args, code, errb.buf.String())
		}
	})
	return out
}

func tlsThroughSOCKS(t *testing.T, socks, caFile string) {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	d, err := proxy.SOCKS5("tcp", socks, nil, &net.Dialer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := d.(proxy.ContextDialer).DialContext(ctx, "tcp", harness.TLSHost+":443")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := tls.Client(c, &tls.Config{RootCAs: pool, ServerName: harness.TLSHost}).HandshakeContext(ctx); err != nil {
		t.Fatalf("TLS handshake through SOCKS5: %v", err)
	}
}

func TestLabOneProcess(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	out := start(t, "--rate", "50mbit", "--delay", "1ms", "--link-mtu", "1500", "--socks5", "127.0.0.1:0", "--control", "127.0.0.1:0", "--ca-out", ca)
	out.wait(t, `link (rate 50mbit, delay 1ms, queue 256p, loss 0, mtu 1500)`)
	ctl := out.wait(t, `control (http://\S+)`)
	socks := out.wait(t, `socks5 (\S+)`)
	out.wait(t, `tls (10\.99\.0\.1:443)`)
	tlsThroughSOCKS(t, socks, ca)

	req, _ := http.NewRequestWithContext(t.Context(), "PUT", ctl+"/link", strings.NewReader(`{"delay":"2ms"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"delay": "2ms"`) || !strings.Contains(string(body), `"mtu": 1500`) {
		t.Fatalf("PUT /link: %d %s", resp.StatusCode, body)
	}
}

func TestLabSplitRoles(t *testing.T) {
	dir := t.TempDir()
	f := func(n string) string { return filepath.Join(dir, n) }
	// Keys are generated into files; each side reads the other's public key.
	ck, err := harness.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := harness.WriteKeyFile(f("client.key"), ck); err != nil {
		t.Fatal(err)
	}
	srv := start(t, "server", "--listen", "127.0.0.1:0", "--key", f("server.key"), "--pub-out", f("server.pub"),
		"--peer", ck.Public().String(), "--ca-out", f("ca.pem"))
	srvUDP := srv.wait(t, `wireguard (\S+)`)
	link := start(t, "link", "--listen", "127.0.0.1:0", "--server", srvUDP, "--rate", "20mbit", "--link-mtu", "1500", "--control", "127.0.0.1:0")
	linkUDP := link.wait(t, `link (\S+) -> \S+ \(rate 20mbit, .*, mtu 1500\)`)
	cl := start(t, "client", "--endpoint", linkUDP, "--key", f("client.key"), "--peer", f("server.pub"),
		"--socks5", "127.0.0.1:0", "--control", "127.0.0.1:0",
		"--serve", "127.0.0.1:0", "--tls-ca", f("ca.pem"), "--mode", "probe")
	socks := cl.wait(t, `socks5 (\S+)`)
	tlsThroughSOCKS(t, socks, f("ca.pem"))
	// The client's health server checks the TLS target through its tunnel,
	// verified with the CA the server wrote.
	health := cl.wait(t, `health (http://\S+)`)
	resp, err := http.Get(health + "/check/?timeout=5s")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("client health server: %d %s", resp.StatusCode, body)
	}

	ctl := cl.wait(t, `control (http://\S+)`)
	resp, err = http.Post(ctl+"/restart", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST /restart: %d", resp.StatusCode)
	}
	tlsThroughSOCKS(t, socks, f("ca.pem"))
}

func TestLabServeChecksTheTargetThroughTheTunnel(t *testing.T) {
	out := start(t, "--rate", "50mbit", "--delay", "1ms", "--socks5", "", "--control", "127.0.0.1:0",
		"--serve", "127.0.0.1:0", "--mode", "probe", "--timeout", "300ms")
	ctl := out.wait(t, `control (http://\S+)`)
	health := out.wait(t, `health (http://\S+)`)
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(health + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	link := func(body string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "PUT", ctl+"/link", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("PUT /link %s: %d", body, resp.StatusCode)
		}
	}

	if code, body := get("/check/?timeout=5s"); code != 200 || body != "pass\n" {
		t.Fatalf("idle tunnel: %d %q", code, body)
	}
	link(`{"down": true}`)
	if code, body := get("/check/?timeout=300ms"); code != 503 || !strings.Contains(body, "timed out") {
		t.Errorf("outage: %d %q", code, body)
	}
	if code, body := get("/"); code != 503 || !strings.HasPrefix(body, "unhealthy") {
		t.Errorf("status during the outage: %d %q", code, body)
	}
	link(`{"down": false}`)
	if code, body := get("/check/?timeout=5s"); code != 200 {
		t.Errorf("after the outage: %d %q", code, body)
	}
}

func TestLabBadUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // in stderr, after the command's name
	}{
		{[]string{"server"}, "tunnelprobe lab server: flag --peer is required"},
		// The address is checked first: no key file is read for it.
		{[]string{"server", "--listen", "bad"}, `tunnelprobe lab server: invalid value "bad" for flag --listen`},
		{[]string{"client", "--socks5", "nowhere"}, "flag --socks5"},
		{[]string{"link", "--control", "x:y"}, `port "y"`},
		{[]string{"--control", "x"}, "tunnelprobe lab: invalid value"},
		{[]string{"--serve", "127.0.0.1"}, "flag --serve"},
		{[]string{"client", "--tun", "wg0", "--socks5", "127.0.0.1:1080"}, "--tun excludes --socks5"},
		{[]string{"client", "--tun", "wg0", "--serve", "127.0.0.1:0", "--tls-ca", "ca.pem"}, "--tun excludes --serve"},
		{[]string{"client", "--tun", "a/b"}, "flag --tun"},
		{[]string{"pause", "stray"}, `tunnelprobe lab pause: unexpected argument "stray"`},
	} {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // should a bad input slip through, nothing stays up
		if code := labCommand(ctx, tc.args, noEnv, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("lab %q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
