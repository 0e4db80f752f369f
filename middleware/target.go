package middleware

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// TargetOptions are what a target's text does not say: how to dial and how
// to verify. The zero value dials on the host network and verifies with the
// system's roots.
type TargetOptions struct {
	// Dialer opens the check's connections; nil means the host network.
	Dialer Dialer
	// RootCAs verifies tls and https targets; nil means the system roots.
	RootCAs *x509.CertPool
	// InsecureSkipVerify accepts any certificate (labs only).
	InsecureSkipVerify bool
	// DNSServer is the server dns targets without one of their own query;
	// empty means the system's resolver.
	DNSServer string
}

// Kinds of check a target can name.
var targetKinds = []string{"tcp", "tls", "http", "dns"}

// ParseTarget returns the check target names, the one syntax of a check
// target for serve --target, load --probe and anything else that takes one:
//
//	tcp://host:port          a TCP dial (TCPCheck); the port is required
//	tls://host[:port]        a dial and a verified TLS handshake (TLSCheck); port 443 when missing
//	http://... https://...   a GET answered 2xx or 3xx (HTTPCheck)
//	dns://name               a lookup of name (DNSCheck); dns://server[:port]/name asks that server
//
// A target without a scheme is checked as kind says (tcp, tls, http or dns),
// as serve's --check does: host[:port] for tcp and tls (port 443 when
// missing), a host name for dns. Errors say what was expected.
func ParseTarget(target, kind string, opts TargetOptions) (Checker, error) {
	scheme, rest, hasScheme := strings.Cut(target, "://")
	if !hasScheme {
		switch kind {
		case "http":
			return nil, errors.New("not an http or https URL")
		case "tcp", "tls", "dns":
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
		return HTTPCheck{URL: target, Dialer: opts.Dialer, RootCAs: opts.RootCAs, InsecureSkipVerify: opts.InsecureSkipVerify}, nil
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
		host, port, err := net.SplitHostPort(WithDefaultPort(rest, "443"))
		if err != nil || host == "" {
			return nil, fmt.Errorf("not a host[:port]: want %s://host:port", scheme)
		}
		if scheme == "tcp" {
			return TCPCheck{Address: net.JoinHostPort(host, port), Dialer: opts.Dialer}, nil
		}
		return TLSCheck{Address: net.JoinHostPort(host, port), RootCAs: opts.RootCAs, InsecureSkipVerify: opts.InsecureSkipVerify, Dialer: opts.Dialer}, nil
	case "dns":
		server, name := opts.DNSServer, rest
		if s, n, ok := strings.Cut(rest, "/"); ok && hasScheme {
			server, name = s, n
		}
		if name == "" || strings.ContainsAny(name, "/: ") {
			return nil, errors.New("not a host name: want dns://name or dns://server/name")
		}
		return DNSCheck{Host: name, Server: server, Dialer: opts.Dialer}, nil
	}
	return nil, fmt.Errorf("unknown scheme %q: want tcp, tls, http, https or dns", scheme)
}

// DefaultTarget returns what a check of kind checks when given no target:
// Cloudflare, a host that answers tcp, tls, http and dns.
func DefaultTarget(kind string) string {
	switch kind {
	case "http":
		return "https://cloudflare.com/"
	case "dns":
		return "cloudflare.com"
	}
	return "cloudflare.com:443"
}

// ParseTargets is ParseTarget for each of targets, or for the default of
// kind when there are none (DefaultTarget). Several targets make one check
// that passes when any of them does (AnyOf). An error names its target.
func ParseTargets(targets []string, kind string, opts TargetOptions) (Checker, error) {
	if len(targets) == 0 {
		targets = []string{DefaultTarget(kind)}
	}
	checks := make([]Checker, 0, len(targets))
	for _, t := range targets {
		c, err := ParseTarget(t, kind, opts)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", t, err)
		}
		checks = append(checks, c)
	}
	if len(checks) == 1 {
		return checks[0], nil
	}
	return AnyOf(checks...), nil
}
