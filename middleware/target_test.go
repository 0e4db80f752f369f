package middleware_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

func TestParseTarget(t *testing.T) {
	opts := middleware.TargetOptions{DNSServer: "10.0.0.53", InsecureSkipVerify: true}
	for _, tc := range []struct {
		target, kind string
		want         middleware.Checker
	}{
		{"tcp://127.0.0.1:9", "", middleware.TCPCheck{Address: "127.0.0.1:9"}},
		{"tcp://[::1]:9/", "tls", middleware.TCPCheck{Address: "[::1]:9"}},
		{"tls://example.test", "", middleware.TLSCheck{Address: "example.test:443", InsecureSkipVerify: true}},
		{"tls://example.test:8443", "tcp", middleware.TLSCheck{Address: "example.test:8443", InsecureSkipVerify: true}},
		{"https://example.test/health", "", middleware.HTTPCheck{URL: "https://example.test/health", InsecureSkipVerify: true}},
		{"dns://example.test", "", middleware.DNSCheck{Host: "example.test", Server: "10.0.0.53"}},
		{"dns://1.1.1.1:53/example.test", "", middleware.DNSCheck{Host: "example.test", Server: "1.1.1.1:53"}},
		// Without a scheme, as serve --check says.
		{"cloudflare.com", "tls", middleware.TLSCheck{Address: "cloudflare.com:443", InsecureSkipVerify: true}},
		{"cloudflare.com", "tcp", middleware.TCPCheck{Address: "cloudflare.com:443"}},
		{"127.0.0.1:1", "tcp", middleware.TCPCheck{Address: "127.0.0.1:1"}},
		{"cloudflare.com", "dns", middleware.DNSCheck{Host: "cloudflare.com", Server: "10.0.0.53"}},
		{"icmp://10.0.0.1", "", middleware.ICMPCheck{Address: "10.0.0.1"}},
		{"icmp://[::1]/", "", middleware.ICMPCheck{Address: "[::1]"}},
		{"one.one.one.one", "icmp", middleware.ICMPCheck{Address: "one.one.one.one"}},
		{"udp-dns://1.1.1.1", "", middleware.DNSQueryCheck{Server: "1.1.1.1"}},
		{"udp-dns://10.99.0.1:5353/tls.lab", "", middleware.DNSQueryCheck{Server: "10.99.0.1:5353", Name: "tls.lab"}},
		{"9.9.9.9/example.test", "udp-dns", middleware.DNSQueryCheck{Server: "9.9.9.9", Name: "example.test"}},
	} {
		got, err := middleware.ParseTarget(tc.target, tc.kind, opts)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseTarget(%q, %q) = %#v, %v; want %#v", tc.target, tc.kind, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ target, kind, mention string }{
		{"ftp://x", "", "unknown scheme"},
		{"tcp://x", "", "needs a port"},
		{"tls://", "", "host[:port]"},
		{"tls://x/path", "", "nothing after the port"},
		{"tls://u@x:1", "", "nothing after the port"},
		{"example.com:80", "http", "http or https URL"},
		{"https://", "", "http or https URL"},
		{"dns://", "", "host name"},
		{"a/b", "dns", "host name"},
		{"x", "", "no scheme"},
		{"example.com/path", "tls", "nothing after the port"},
		{"icmp://10.0.0.1:7", "", "no port"},
		{"icmp://", "", "want icmp://host"},
		{"udp-dns://", "", "udp-dns://server"},
		{"1.1.1.1/a/b", "udp-dns", "udp-dns://server"},
	} {
		if _, err := middleware.ParseTarget(tc.target, tc.kind, opts); err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("ParseTarget(%q, %q): %v, want an error saying %q", tc.target, tc.kind, err, tc.mention)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"tcp://127.0.0.1:9", "tls://x", "https://x/", "dns://s/n", "host:1", "[::1]", "icmp://h", "udp-dns://s:53/n"} {
		f.Add(s, "tls")
	}
	f.Fuzz(func(t *testing.T, target, kind string) {
		c, err := middleware.ParseTarget(target, kind, middleware.TargetOptions{})
		if (c == nil) == (err == nil) {
			t.Errorf("ParseTarget(%q, %q) = %v, %v: want a check or an error", target, kind, c, err)
		}
	})
}

// A light probe's port belongs to udp-dns or tcp: an ICMP probe of
// "HOST:PORT" would never be answered, and so decide nothing, silently.
func TestChooseLightProbeRefusesAPortWithoutItsKind(t *testing.T) {
	for _, target := range []string{"127.0.0.1:5353", "icmp://127.0.0.1:53", "[::1]:53", "icmp://[::1]:53",
		"tcp://127.0.0.1:0", "tcp://127.0.0.1:99999", "udp-dns://127.0.0.1:domain"} {
		if p, _, err := middleware.ChooseLightProbe(context.Background(), target, nil); err == nil || !strings.Contains(err.Error(), "port") {
			t.Errorf("%s: %+v, %v; want an error about the port", target, p, err)
		}
	}
	// Nor what cannot be a host: it would be probed, never answered.
	for _, target := range []string{"tcp://:8443", "udp-dns://:53", "tcp://127.0.0.1/x", "udp-dns://127.0.0.1/example.com",
		"tcp://127.0.0.1:8443 ", " 127.0.0.1", "127.0.0.1,tcp://127.0.0.1:1"} {
		if p, _, err := middleware.ChooseLightProbe(context.Background(), target, nil); err == nil {
			t.Errorf("%q accepted as %+v", target, p)
		}
	}
	for _, target := range []string{"udp-dns://127.0.0.1:5353", "tcp://127.0.0.1:8443", "tcp://[::1]:8443", "udp-dns://[fe80::1%lo]:53"} {
		if _, _, err := middleware.ChooseLightProbe(context.Background(), target, nil); err != nil {
			t.Errorf("%s: %v", target, err)
		}
	}
}
