package harness

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/proxy"
)

func TestSOCKS5CarriesTLSHandshake(t *testing.T) {
	l := startLab(t, Config{SOCKS5: "127.0.0.1:0", Link: Settings{Rate: 50_000_000, Delay: 2 * time.Millisecond}})
	d, err := proxy.SOCKS5("tcp", l.SOCKS5Addr().String(), nil, &net.Dialer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	// By name, as curl's socks5h:// sends it, and by address.
	for _, target := range []string{net.JoinHostPort(TLSHost, "443"), l.TLSAddr().String()} {
		c, err := d.(proxy.ContextDialer).DialContext(ctx, "tcp", target)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		tc := tls.Client(c, &tls.Config{RootCAs: l.CA().Pool, ServerName: TLSHost})
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			t.Fatalf("%s: handshake: %v", target, err)
		}
		// And a request over it, half-close included.
		io.WriteString(tc, "GET / HTTP/1.0\r\nHost: tls.lab\r\n\r\n")
		resp, err := io.ReadAll(tc)
		c.Close()
		if err != nil || !strings.HasPrefix(string(resp), "HTTP/1.0 200") {
			t.Fatalf("%s: response %q, %v", target, resp, err)
		}
	}
	before := l.Link().Stats().Uplink.Packets
	if before == 0 {
		t.Fatal("SOCKS5 traffic did not cross the link")
	}
	// An unknown name is a SOCKS error, not a hang.
	if _, err := d.(proxy.ContextDialer).DialContext(ctx, "tcp", "nowhere.lab:443"); err == nil {
		t.Fatal("dial of an unknown name succeeded")
	}
}

func TestControlHandler(t *testing.T) {
	l := startLab(t, Config{Link: Settings{Rate: 20_000_000}})
	restarts := 0
	srv := httptest.NewServer(ControlHandler(l.Link(), func(ctx context.Context) error {
		restarts++
		return l.Restart(ctx)
	}))
	defer srv.Close()

	do := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, m := do("GET", "/link", ""); code != 200 || m["rate"] != "20mbit" || m["uplink"] == nil {
		t.Fatalf("GET /link: %d %v", code, m)
	}
	code, m := do("PUT", "/link", `{"rate":"5MB/s","delay":"20ms","queue":"300p","loss":0.01,"mtu":1280,"down":true}`)
	if code != 200 || m["rate"] != "40mbit" || m["delay"] != "20ms" || m["queue"] != "300p" || m["mtu"] != 1280.0 || m["down"] != true {
		t.Fatalf("PUT /link: %d %v", code, m)
	}
	if s := l.Link().Settings(); s.Rate != 40_000_000 || s.Delay != 20*time.Millisecond || s.Queue.Packets != 300 || s.Loss != 0.01 || s.MTU != 1280 || !s.Down {
		t.Fatalf("settings not applied: %+v", s)
	}
	code, m = do("PUT", "/link", `{"down":false,"uplink_down":true}`)
	if code != 200 || m["down"] != false || m["uplink_down"] != true || m["downlink_down"] != false {
		t.Fatalf("PUT a one-way outage: %d %v", code, m)
	}
	if s := l.Link().Settings(); s.Down || !s.UplinkDown || s.DownlinkDown {
		t.Fatalf("one-way outage not applied: %+v", s)
	}
	for _, tc := range []struct{ body, field string }{
		{`{"rate":"0"}`, "rate"}, {`{"rate":"20furlongs"}`, "rate"}, {`{"delay":"-5ms"}`, "delay"},
		{`{"queue":"0p"}`, "queue"}, {`{"loss":2}`, "loss"}, {`{"mtu":100}`, "mtu"}, {`{"mtu":"big"}`, "mtu"}, {`{"down":"yes"}`, "down"}, {`{"downlink_down":1}`, "downlink_down"},
		{`{"colour":"red"}`, "colour"}, {`not json`, "body"},
		{`{"rate":"5mbit"} {"down":true}`, "body"}, {`{"rate":"5mbit"}garbage`, "body"},
	} {
		code, m := do("PUT", "/link", tc.body)
		if code != 400 || m["field"] != tc.field || !strings.Contains(m["error"].(string), tc.field) {
			t.Errorf("PUT %s: %d %v; want 400 naming %s", tc.body, code, m, tc.field)
		}
	}
	if s := l.Link().Settings(); s.Rate != 40_000_000 {
		t.Fatalf("a rejected update changed the settings: %+v", s)
	}
	if code, _ := do("DELETE", "/link", ""); code != 405 {
		t.Fatalf("DELETE /link: %d, want 405", code)
	}
	if code, _ := do("GET", "/restart", ""); code != 405 {
		t.Fatalf("GET /restart: %d, want 405", code)
	}
	if code, _ := do("POST", "/restart", ""); code != 200 || restarts != 1 {
		t.Fatalf("POST /restart: %d, %d restarts", code, restarts)
	}
}

// restartServer serves l's control API and returns its URL.
func restartServer(t *testing.T, l *Lab) string {
	t.Helper()
	srv := httptest.NewServer(ControlHandler(l.Link(), l.Restart))
	t.Cleanup(srv.Close)
	return srv.URL
}

// postRestart posts /restart with ctx and returns the status code, or 0
// when the client gave up first.
func postRestart(ctx context.Context, url string) int {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/restart", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestRestartAbortedByItsCallerStillBringsTheTunnelUp(t *testing.T) {
	l := startLab(t, Config{})
	aborted := httptest.NewServer(ControlHandler(l.Link(), l.Restart))
	defer aborted.Close()
	// Callers that hang up at once and at every point of a restart (the
	// device comes back after a 20 ms pause): none may leave it down.
	var wg sync.WaitGroup
	for i := range 30 {
		ctx, cancel := context.WithTimeout(t.Context(), time.Duration(i)*time.Millisecond)
		wg.Go(func() {
			defer cancel()
			postRestart(ctx, aborted.URL)
		})
	}
	wg.Wait()
	// A client returns when it hangs up, before the server's handler does:
	// Close waits for every handler, so that no aborted restart is still
	// queued to take the device down under the check below.
	aborted.Close()
	url := restartServer(t, l)
	if code := postRestart(t.Context(), url); code != http.StatusOK {
		t.Fatalf("a restart after the aborted ones: %d, want 200", code)
	}
	if err := tlsCheck(t.Context(), l, 10*time.Second); err != nil {
		t.Errorf("the tunnel after the aborted restarts: %v", err)
	}
}

func TestConcurrentRestartsAllSucceed(t *testing.T) {
	l := startLab(t, Config{})
	url := restartServer(t, l)
	codes := make(chan int, 30)
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() { codes <- postRestart(t.Context(), url) })
	}
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Errorf("a concurrent restart answered %d, want 200", code)
		}
	}
	if err := tlsCheck(t.Context(), l, 10*time.Second); err != nil {
		t.Errorf("the tunnel after 30 concurrent restarts: %v", err)
	}
}

func TestRestartOfADownClientBringsItUp(t *testing.T) {
	l := startLab(t, Config{})
	if err := l.Down(); err != nil {
		t.Fatal(err)
	}
	if err := l.Restart(t.Context()); err != nil {
		t.Fatalf("Restart of a down client: %v", err)
	}
	if err := tlsCheck(t.Context(), l, 10*time.Second); err != nil {
		t.Errorf("after the restart: %v", err)
	}
}
