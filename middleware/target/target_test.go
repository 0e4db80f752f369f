package target_test

import (
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/target"
)

func TestParse(t *testing.T) {
	opts := target.Options{DNSServer: "10.0.0.53", InsecureSkipVerify: true}
	for _, tc := range []struct {
		text, kind string
		want       check.Checker
	}{
		{"tcp://127.0.0.1:9", "", check.TCP{Address: "127.0.0.1:9"}},
		{"tcp://[::1]:9/", "tls", check.TCP{Address: "[::1]:9"}},
		{"tls://example.test", "", check.TLS{Address: "example.test:443", InsecureSkipVerify: true}},
		{"tls://example.test:8443", "tcp", check.TLS{Address: "example.test:8443", InsecureSkipVerify: true}},
		{"https://example.test/health", "", check.HTTP{URL: "https://example.test/health", InsecureSkipVerify: true}},
		{"dns://example.test", "", check.DNS{Host: "example.test", Server: "10.0.0.53"}},
		{"dns://1.1.1.1:53/example.test", "", check.DNS{Host: "example.test", Server: "1.1.1.1:53"}},
		// Without a scheme, as serve --check says.
		{"cloudflare.com", "tls", check.TLS{Address: "cloudflare.com:443", InsecureSkipVerify: true}},
		{"cloudflare.com", "tcp", check.TCP{Address: "cloudflare.com:443"}},
		{"127.0.0.1:1", "tcp", check.TCP{Address: "127.0.0.1:1"}},
		{"cloudflare.com", "dns", check.DNS{Host: "cloudflare.com", Server: "10.0.0.53"}},
		{"icmp://10.0.0.1", "", check.ICMP{Address: "10.0.0.1"}},
		{"icmp://[::1]/", "", check.ICMP{Address: "[::1]"}},
		{"one.one.one.one", "icmp", check.ICMP{Address: "one.one.one.one"}},
		{"udp-dns://1.1.1.1", "", check.DNSQuery{Server: "1.1.1.1", FreshLabel: true}},
		{"udp-dns://10.99.0.1:5353/tls.lab", "", check.DNSQuery{Server: "10.99.0.1:5353", Name: "tls.lab"}},
		{"9.9.9.9/example.test", "udp-dns", check.DNSQuery{Server: "9.9.9.9", Name: "example.test"}},
	} {
		got, err := target.Parse(tc.text, tc.kind, opts)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q, %q) = %#v, %v; want %#v", tc.text, tc.kind, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ text, kind, mention string }{
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
		if _, err := target.Parse(tc.text, tc.kind, opts); err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("Parse(%q, %q): %v, want an error saying %q", tc.text, tc.kind, err, tc.mention)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"tcp://127.0.0.1:9", "tls://x", "https://x/", "dns://s/n", "host:1", "[::1]", "icmp://h", "udp-dns://s:53/n"} {
		f.Add(s, "tls")
	}
	f.Fuzz(func(t *testing.T, s, kind string) {
		c, err := target.Parse(s, kind, target.Options{})
		if (c == nil) == (err == nil) {
			t.Errorf("Parse(%q, %q) = %v, %v: want a check or an error", s, kind, c, err)
		}
	})
}

// The default targets are addresses, but for the dns kind, whose point is
// resolving: a check that needs a name resolved would fail a working tunnel
// whenever the VPN's DNS settings fail the lookup.
func TestDefaultsNeedNoResolution(t *testing.T) {
	for _, kind := range []string{"tcp", "tls", "http", "icmp", "udp-dns"} {
		text := target.Default(kind)
		host := strings.TrimPrefix(strings.TrimSuffix(text, "/"), "https://")
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if _, err := netip.ParseAddr(host); err != nil {
			t.Errorf("the default %s target %q needs a name resolved", kind, text)
		}
		if _, err := target.Parse(text, kind, target.Options{}); err != nil {
			t.Errorf("the default %s target %q: %v", kind, text, err)
		}
	}
}
