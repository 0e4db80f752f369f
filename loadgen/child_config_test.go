package loadgen_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

func TestChildConfigSplit(t *testing.T) {
	c := loadgen.ChildConfig{Target: "127.0.0.1:9", Conns: 5, Rate: 10, ConnectRate: 50, Probe: "tcp://127.0.0.1:9", ProbeCAPEM: []byte("x")}
	parts := c.Split(8) // more processes than connections: one each
	if len(parts) != 5 {
		t.Fatalf("%d parts for 5 connections", len(parts))
	}
	var conns int
	var rate, connectRate float64
	for i, p := range parts {
		conns += p.Conns
		rate += float64(p.Rate)
		connectRate += p.ConnectRate
		if (p.Probe != "") != (i == 0) || (p.ProbeCAPEM != nil) != (i == 0) {
			t.Errorf("part %d: probe %q; only the first probes", i, p.Probe)
		}
	}
	if conns != 5 || rate != 10 || connectRate != 50 {
		t.Errorf("parts add up to %d connections, %v bit/s, %v connects/s", conns, rate, connectRate)
	}
}

func TestChildConfigBuild(t *testing.T) {
	cfg, err := loadgen.ChildConfig{Target: "127.0.0.1:9", Conns: 3, SOCKS5: "127.0.0.1:1080", Probe: "tls://tls.lab"}.Build()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Dialer == nil || cfg.Conns != 3 {
		t.Errorf("built %+v, want a SOCKS5 dialer and 3 connections", cfg)
	}
	if c, ok := cfg.Probe.(check.TLS); !ok || c.Address != "tls.lab:443" || c.Dialer == nil {
		t.Errorf("probe %#v, want a TLS check of tls.lab:443 through the proxy", cfg.Probe)
	}
	// A process with a dialer of its own (the in-process lab) dials and
	// probes through it, whatever the SOCKS5 address its children get.
	var own net.Dialer
	cfg, err = loadgen.ChildConfig{Target: "127.0.0.1:9", Conns: 3, SOCKS5: "127.0.0.1:1080", Probe: "tls://tls.lab"}.BuildOver(&own)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Dialer != &own || cfg.Probe.(check.TLS).Dialer != &own {
		t.Errorf("BuildOver: dialer %v, probe %#v; want both through the given dialer", cfg.Dialer, cfg.Probe)
	}
	for _, tc := range []struct {
		c       loadgen.ChildConfig
		mention string
	}{
		{loadgen.ChildConfig{Target: "127.0.0.1:9", Conns: 1, Probe: "ftp://x"}, "probe"},
		{loadgen.ChildConfig{Target: "127.0.0.1:9", Conns: 1, Probe: "tls://x", ProbeCAPEM: []byte("not PEM")}, "CA"},
		{loadgen.ChildConfig{Target: "nowhere", Conns: 1}, "Target"},
		{loadgen.ChildConfig{Target: "127.0.0.1:9"}, "Conns"},
	} {
		if _, err := tc.c.Build(); err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%+v: %v, want an error naming %s", tc.c, err, tc.mention)
		}
	}
}

func TestChildConfigExpected(t *testing.T) {
	for _, tc := range []struct {
		c    loadgen.ChildConfig
		want time.Duration
	}{
		{loadgen.ChildConfig{Conns: 100, Ramp: 10 * time.Second, Duration: 30 * time.Second}, 40 * time.Second},
		{loadgen.ChildConfig{Conns: 1000, ConnectRate: 500, Duration: 5 * time.Second}, 7 * time.Second},
		{loadgen.ChildConfig{Conns: 10, Duration: time.Second}, time.Second},
	} {
		if got := tc.c.Expected(); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.c, got, tc.want)
		}
	}
}
