package loadgen_test

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

func TestParseSources(t *testing.T) {
	t.Parallel()
	a := netip.MustParseAddr
	for _, tc := range []struct {
		in   string
		want []netip.Addr
	}{
		{"127.0.0.2", []netip.Addr{a("127.0.0.2")}},
		{"127.0.0.2-127.0.0.4", []netip.Addr{a("127.0.0.2"), a("127.0.0.3"), a("127.0.0.4")}},
		{"127.0.0.9 - 127.0.0.9", []netip.Addr{a("127.0.0.9")}},
		{"127.0.0.2,127.0.0.5-127.0.0.6", []netip.Addr{a("127.0.0.2"), a("127.0.0.5"), a("127.0.0.6")}},
		{"127.0.0.255-127.0.1.0", []netip.Addr{a("127.0.0.255"), a("127.0.1.0")}},
		{"::1", []netip.Addr{a("::1")}},
		{"::ffff:127.0.0.2", []netip.Addr{a("127.0.0.2")}},
	} {
		got, err := loadgen.ParseSources(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("loadgen.ParseSources(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "x", "127.0.0.9-127.0.0.2", "127.0.0.1-::1", "127.0.0.1,::1", "127.0.0.2,127.0.0.2",
		"127.0.0.1-", "-127.0.0.1", "10.0.0.0-10.255.255.255", "fe80::1%eth0", "127.0.0.1,,127.0.0.2"} {
		if got, err := loadgen.ParseSources(in); err == nil {
			t.Errorf("loadgen.ParseSources(%q) = %v, want an error", in, got)
		}
	}
}

func FuzzParseSources(f *testing.F) {
	for _, s := range []string{"127.0.0.2-127.0.0.9", "127.0.0.2,127.0.0.3", "::1-::3", "1.2.3.4-1.2.3.3", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addrs, err := loadgen.ParseSources(s)
		if err != nil {
			return
		}
		if len(addrs) == 0 || len(addrs) > loadgen.MaxSources {
			t.Fatalf("%q: %d addresses", s, len(addrs))
		}
		seen := map[netip.Addr]bool{}
		for _, a := range addrs {
			if !a.IsValid() || seen[a] || a.Is4() != addrs[0].Is4() || a.Is4In6() {
				t.Fatalf("%q: bad list %v", s, addrs)
			}
			seen[a] = true
		}
		// What is written back reads as the same list.
		if again, err := loadgen.ParseSources(loadgen.FormatSources(addrs)); err != nil || !slices.Equal(again, addrs) {
			t.Fatalf("%q: FormatSources(%v) reads back as %v, %v", s, addrs, again, err)
		}
	})
}
