package loadgen

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// MaxSources bounds ParseSources: each source address already adds some
// 28,000 ports to a run, so a longer list is a typo.
const MaxSources = 1024

// ParseSources parses the text of Config.Sources: a comma list whose items
// are addresses or ranges "first-last" of one family, in order, each
// address at most once, MaxSources at most.
func ParseSources(s string) ([]netip.Addr, error) {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	add := func(a netip.Addr) error {
		if seen[a] {
			return fmt.Errorf("%s is listed twice", a)
		}
		if len(out) == MaxSources {
			return fmt.Errorf("more than %d addresses", MaxSources)
		}
		seen[a] = true
		out = append(out, a)
		return nil
	}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "-")
		first, err := netip.ParseAddr(strings.TrimSpace(lo))
		if err != nil || first.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address", lo)
		}
		first = first.Unmap()
		if !isRange {
			if err := add(first); err != nil {
				return nil, err
			}
			continue
		}
		last, err := netip.ParseAddr(strings.TrimSpace(hi))
		if err != nil || last.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address", hi)
		}
		last = last.Unmap()
		switch {
		case first.Is4() != last.Is4():
			return nil, fmt.Errorf("range %s mixes IPv4 and IPv6", item)
		case last.Less(first):
			return nil, fmt.Errorf("range %s runs backwards", item)
		}
		for a := first; ; a = a.Next() {
			if err := add(a); err != nil {
				return nil, err
			}
			if a == last {
				break
			}
		}
	}
	for _, a := range out[1:] {
		if a.Is4() != out[0].Is4() {
			return nil, errors.New("mixes IPv4 and IPv6 addresses")
		}
	}
	return out, nil
}

// FormatSources writes addrs as the comma list that ParseSources reads
// back: the text of Config.Sources, empty for none.
func FormatSources(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ",")
}
