package target

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/internal/hostport"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// Options are what a target's text does not say: how to dial and how
// to verify. The zero value dials on the host network and verifies with the
// system's roots.
type Options struct {
	// Dialer opens the check's connections; nil means the host network.
	Dialer check.Dialer
	// RootCAs verifies tls and https targets; nil means the system roots.
	RootCAs *x509.CertPool
	// InsecureSkipVerify accepts any certificate (labs only).
	InsecureSkipVerify bool
	// DNSServer is the server dns targets without one of their own query;
	// empty means the system's resolver.
	DNSServer string
}

// Kinds of check a target can name.
var targetKinds = []string{"tcp", "tls", "http", "dns", "icmp", "udp-dns"}

// Parse returns the check target names, the one syntax of a check
// target for serve --target, load --probe and anything else that takes one:
//
//	tcp://host:port          a TCP dial (check.TCP); the port is required
//	tls://host[:port]        a dial and a verified TLS handshake (check.TLS); port 443 when missing
//	http://... https://...   a GET answered 2xx or 3xx (check.HTTP)
//	dns://name               a lookup of name (check.DNS); dns://server[:port]/name asks that server
//	icmp://host              an ICMP echo (check.ICMP)
//	udp-dns://server[:port][/name]
//	                         one DNS query over UDP to server, answered NOERROR or NXDOMAIN
//	                         (check.DNSQuery); without a name, a fresh one each time
//
// A target without a scheme is checked as kind says (tcp, tls, http, dns,
// icmp or udp-dns), as serve's --check does: host[:port] for tcp and tls
// (port 443 when missing), a host name for dns and icmp, server[/name] for
// udp-dns. The checks are package middleware/check's. Errors say what was
// expected.
func Parse(target, kind string, opts Options) (check.Checker, error) {
	scheme, rest, hasScheme := strings.Cut(target, "://")
	if !hasScheme {
		switch kind {
		case "http":
			return nil, errors.New("not an http or https URL")
		case "tcp", "tls", "dns", "icmp", "udp-dns":
			scheme, rest = kind, target
		default:
			return nil, fmt.Errorf("no scheme, and the kind %q is not one of %s", kind, strings.Join(targetKinds, ", "))
		}
	}
	switch scheme {
	case "http", "https":
		u, err := url.Parse(target)
		if err != nil || u.Host == "" {
			return nil, errors.New("not an http or https URL")
		}
		return check.HTTP{URL: target, Dialer: opts.Dialer, RootCAs: opts.RootCAs, InsecureSkipVerify: opts.InsecureSkipVerify}, nil
	case "tcp", "tls":
		if hasScheme {
			rest = strings.TrimSuffix(rest, "/")
			if _, _, err := net.SplitHostPort(rest); err != nil && scheme == "tcp" {
				return nil, errors.New("a tcp target needs a port: want tcp://host:port")
			}
		}
		if strings.ContainsAny(rest, "/?#@") {
			return nil, fmt.Errorf("want %s://host:port, with nothing after the port (a URL needs http:// or https://)", scheme)
		}
		host, port, err := net.SplitHostPort(hostport.WithDefault(rest, "443"))
		if err != nil || host == "" {
			return nil, fmt.Errorf("not a host[:port]: want %s://host:port", scheme)
		}
		if scheme == "tcp" {
			return check.TCP{Address: net.JoinHostPort(host, port), Dialer: opts.Dialer}, nil
		}
		return check.TLS{Address: net.JoinHostPort(host, port), RootCAs: opts.RootCAs, InsecureSkipVerify: opts.InsecureSkipVerify, Dialer: opts.Dialer}, nil
	case "dns":
		server, name := opts.DNSServer, rest
		if s, n, ok := strings.Cut(rest, "/"); ok && hasScheme {
			server, name = s, n
		}
		if name == "" || strings.ContainsAny(name, "/: ") {
			return nil, errors.New("not a host name: want dns://name or dns://server/name")
		}
		return check.DNS{Host: name, Server: server, Dialer: opts.Dialer}, nil
	case "icmp":
		host := strings.TrimSuffix(rest, "/")
		if host == "" || strings.ContainsAny(host, "/?#@ ") || strings.Count(host, ":") == 1 {
			return nil, errors.New("not a host: want icmp://host, with no port")
		}
		return check.ICMP{Address: host, Dialer: opts.Dialer}, nil
	case "udp-dns":
		server, name, _ := strings.Cut(rest, "/")
		if _, _, err := net.SplitHostPort(hostport.WithDefault(server, "53")); err != nil || server == "" || strings.ContainsAny(name, "/: ") {
			return nil, errors.New("not a server: want udp-dns://server[:port][/name]")
		}
		// Without a name, a fresh one under the default zone each time: no
		// cache on the way can answer it.
		return check.DNSQuery{Server: server, Name: name, Dialer: opts.Dialer, FreshLabel: name == ""}, nil
	}
	return nil, fmt.Errorf("unknown scheme %q: want tcp, tls, http, https, dns, icmp or udp-dns", scheme)
}

// Default returns what a check of kind checks when given no target:
// Cloudflare's 1.1.1.1, which answers every kind and whose certificate
// names the address. Only the dns kind, whose point is resolving, names a
// host: a check that needs a name resolved would fail a working tunnel
// whenever the VPN's DNS settings fail the lookup.
func Default(kind string) string {
	switch kind {
	case "http":
		return "https://1.1.1.1/"
	case "dns":
		return "cloudflare.com"
	case "icmp", "udp-dns":
		return "1.1.1.1"
	}
	return "1.1.1.1:443"
}

// ParseList is Parse for each of targets, or for the default of kind when
// there are none ([Default]), with the checks one by one: several make one
// check that passes when any of them does with [check.AnyOf], or a
// schedule that takes them in turn with [check.RoundRobin]. An error
// names its target.
func ParseList(targets []string, kind string, opts Options) ([]check.Checker, error) {
	if len(targets) == 0 {
		targets = []string{Default(kind)}
	}
	checks := make([]check.Checker, 0, len(targets))
	for _, t := range targets {
		c, err := Parse(t, kind, opts)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", t, err)
		}
		checks = append(checks, c)
	}
	return checks, nil
}
