package main

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// rateValue is --rate: "greedy" (0) or a rate as the lab's link takes it.
type rateValue struct {
	text string
	bits float64
}

func (v *rateValue) String() string {
	if v == nil || v.text == "" {
		return "greedy"
	}
	return v.text
}

func (v *rateValue) Set(s string) error {
	if strings.EqualFold(strings.TrimSpace(s), "greedy") {
		v.text, v.bits = s, 0
		return nil
	}
	r, err := harness.ParseRate(s)
	if err != nil {
		return errors.New(`want "greedy" or a rate such as 100mbit, 5MB/s or a number of bits/s`)
	}
	v.text, v.bits = s, float64(r)
	return nil
}

// sourceList is --source: addresses as ranges or a comma list.
type sourceList struct {
	text  string
	addrs []netip.Addr
}

func (l *sourceList) String() string {
	if l == nil {
		return ""
	}
	return l.text
}

func (l *sourceList) Set(s string) error {
	addrs, err := parseSources(s)
	if err != nil {
		return err
	}
	l.text, l.addrs = s, addrs
	return nil
}

// parseSources parses a comma list whose items are addresses or ranges
// "first-last" of one family, in order, each address at most once.
func parseSources(s string) ([]netip.Addr, error) {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	add := func(a netip.Addr) error {
		if seen[a] {
			return fmt.Errorf("%s is listed twice", a)
		}
		if len(out) == maxSources {
			return fmt.Errorf("more than %d addresses", maxSources)
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

// probeValue is --probe: tls://host:port or tcp://host:port.
type probeValue struct {
	text string
}

func (v *probeValue) String() string {
	if v == nil {
		return ""
	}
	return v.text
}

func (v *probeValue) Set(s string) error {
	if _, err := v.parse(s, middleware.TargetOptions{}); err != nil {
		return err
	}
	v.text = s
	return nil
}

// parse reads s as the one syntax of a check target; load takes tls:// and
// tcp:// only, which the lab's and a SOCKS5 proxy's paths carry.
func (v *probeValue) parse(s string, opts middleware.TargetOptions) (middleware.Checker, error) {
	if !strings.HasPrefix(s, "tls://") && !strings.HasPrefix(s, "tcp://") {
		return nil, errors.New("want tls://host:port or tcp://host:port")
	}
	return middleware.ParseTarget(s, "", opts)
}

// checker returns the check v names, dialing through d.
func (v *probeValue) checker(d middleware.Dialer, roots *x509.CertPool, insecure bool) middleware.Checker {
	c, _ := v.parse(v.text, middleware.TargetOptions{Dialer: d, RootCAs: roots, InsecureSkipVerify: insecure}) // checked by Set
	return c
}
