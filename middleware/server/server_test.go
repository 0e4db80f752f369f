package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tunnelprobe/tunnelprobe/internal/syncbuf"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

// TestHealCommandConfig: Config.HealCommand is the heal the loop runs, in
// place of Monitor.Heal, and the Logger hears of it.
func TestHealCommandConfig(t *testing.T) {
	healed := filepath.Join(t.TempDir(), "healed")
	healedByFunc := make(chan struct{}, 1)
	healEnded := make(chan struct{}, 16)
	var log syncbuf.Buffer
	srv, err := server.New(check.Func(func(context.Context) error { return errors.New("down") }), server.Config{
		Monitor: middleware.Config{
			Heal:        func(context.Context) error { healedByFunc <- struct{}{}; return nil },
			HealBackoff: middleware.HealBackoff{Initial: 1},
			Observer: middleware.ObserverFuncs{OnHealed: func(middleware.HealEvent) {
				healEnded <- struct{}{}
			}},
		},
		HealCommand: "touch '" + healed + "'",
		Logger:      slog.New(slog.NewTextHandler(&log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := serve(t, srv)
	<-healEnded // the first heal
	stop()
	if _, err := os.Stat(healed); err != nil {
		t.Errorf("the heal command did not run: %v", err)
	}
	select {
	case <-healedByFunc:
		t.Error("Monitor.Heal ran although HealCommand is set")
	default:
	}
	if log.String() == "" {
		t.Error("nothing logged")
	}
}

// TestHealRequestsConfig: Config.HealRequests are the heal the loop runs,
// in place of Monitor.Heal: the requests reach the VPN's control API in
// order, with their header, and the heal ends as healed.
func TestHealRequestsConfig(t *testing.T) {
	api := &controlAPI{status: http.StatusOK}
	ctl := httptest.NewServer(api)
	defer ctl.Close()
	healed := make(chan middleware.HealEvent, 16)
	header := http.Header{"X-Api-Key": {"k1"}}
	srv, err := server.New(check.Func(func(context.Context) error { return errors.New("down") }), server.Config{
		Monitor: middleware.Config{
			Heal:        func(context.Context) error { t.Error("Monitor.Heal ran although HealRequests are set"); return nil },
			HealBackoff: middleware.HealBackoff{Initial: 1},
			Observer:    middleware.ObserverFuncs{OnHealed: func(e middleware.HealEvent) { healed <- e }},
		},
		HealRequests: []server.HealRequest{
			{Method: http.MethodPut, URL: ctl.URL + "/v1/vpn/status", Body: `{"status":"stopped"}`, Header: header},
			{Method: http.MethodPut, URL: ctl.URL + "/v1/vpn/status", Body: `{"status":"running"}`, Header: header},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := serve(t, srv)
	e := <-healed // the first heal
	stop()
	if e.Err != nil {
		t.Errorf("the heal failed: %v", e.Err)
	}
	got := api.requests()
	want := []string{
		`PUT /v1/vpn/status {"status":"stopped"} key=k1 type=application/json`,
		`PUT /v1/vpn/status {"status":"running"} key=k1 type=application/json`,
	}
	if len(got) < 2 || strings.Join(got[:2], "\n") != strings.Join(want, "\n") {
		t.Errorf("the control API got %q, want %q first", got, want)
	}
}

// collectingSource is a CounterSource that also collects metrics of its
// own, as a WireGuard device does its peers'.
type collectingSource struct{ desc *prometheus.Desc }

func (collectingSource) ReadCounters() (middleware.Counters, error) {
	return middleware.Counters{RxBytes: 1500, TxBytes: 900, RxPackets: 3, TxPackets: 2}, nil
}
func (s collectingSource) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }
func (s collectingSource) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, 42)
}

// TestMetricsWithEvidence: with traffic evidence, /metrics carries the
// tunnel's counters and whatever its source collects.
func TestMetricsWithEvidence(t *testing.T) {
	src := collectingSource{desc: prometheus.NewDesc("test_peer_handshake_age_seconds", "test", nil, nil)}
	srv, err := server.New(check.Func(func(context.Context) error { return nil }), server.Config{
		Monitor: middleware.Config{Mode: middleware.ModeProbe, Evidence: &middleware.Evidence{Source: src}},
		Metrics: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := serve(t, srv)
	defer stop()
	resp, err := http.Get("http://" + addr + server.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	for _, line := range []string{
		"tunnelprobe_tunnel_received_bytes_total 1500", "tunnelprobe_tunnel_sent_bytes_total 900",
		"tunnelprobe_tunnel_received_packets_total 3", "tunnelprobe_tunnel_sent_packets_total 2",
		"test_peer_handshake_age_seconds 42",
	} {
		if !strings.Contains(string(body), "\n"+line+"\n") {
			t.Errorf("/metrics lacks %q", line)
		}
	}
}

// serve runs srv on a loopback listener until stop, which checks that Serve
// returned nil; it returns the address.
func serve(t *testing.T, srv *server.Server) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return ln.Addr().String(), func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// serveGRPC serves srv as serve does, with ownListener as serveWithGRPC
// does, and returns where its gRPC service answers: the health listener,
// which srv must serve it on (Config.GRPC), or the gRPC listener.
func serveGRPC(t *testing.T, srv *server.Server, ownListener bool) (addr string, stop func()) {
	t.Helper()
	if ownListener {
		_, addr, stop = serveWithGRPC(t, srv)
		return addr, stop
	}
	return serve(t, srv)
}

// listenerName names the subtests of serveGRPC's two cases.
var listenerName = map[bool]string{false: "one listener", true: "own listener"}

// serveWithGRPC runs srv's ServeWithGRPC on two loopback listeners until
// stop, as serve does, and returns their addresses.
func serveWithGRPC(t *testing.T, srv *server.Server) (httpAddr, grpcAddr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	grpcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeWithGRPC(ctx, ln, grpcLn) }()
	return ln.Addr().String(), grpcLn.Addr().String(), func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
