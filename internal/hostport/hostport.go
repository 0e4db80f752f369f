// Package hostport completes the host[:port] addresses that checks and
// check targets take, so that every check and the target syntax add a
// missing port the same way.
package hostport

import "net"

// WithDefault returns target with port appended when target names no
// port: "example.com" becomes "example.com:443" for port "443". IPv6
// literals are bracketed. A target that already has a port is returned
// unchanged.
func WithDefault(target, port string) string {
	if _, _, err := net.SplitHostPort(target); err == nil {
		return target
	}
	host := target
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	return net.JoinHostPort(host, port)
}
