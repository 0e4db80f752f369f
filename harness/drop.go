package harness

import (
	"fmt"
	"strings"
	"sync/atomic"

	"gvisor.dev/gvisor/pkg/tcpip/header"
)

// The kinds of packet the server's side can drop without an answer (see
// Server.Drop): what a far side that filters ICMP, or blocks a resolver,
// or drops TCP does.
const (
	DropICMP = "icmp" // ICMP and ICMPv6: the echo requests of a light probe
	DropDNS  = "dns"  // UDP to port 53: a DNS light probe's queries
	DropTCP  = "tcp"  // every TCP segment: the users' connections, the TLS target
)

// dropKinds is a set of kinds, as bits.
type dropKinds uint32

const (
	dropICMP dropKinds = 1 << iota
	dropDNS
	dropTCP
)

var dropBits = map[string]dropKinds{DropICMP: dropICMP, DropDNS: dropDNS, DropTCP: dropTCP}

// ParseDropKind reads one kind: icmp, dns or tcp.
func ParseDropKind(s string) (string, error) {
	if _, ok := dropBits[s]; !ok {
		return "", fmt.Errorf("%q is not a kind of packet to drop: want %s, %s or %s", s, DropICMP, DropDNS, DropTCP)
	}
	return s, nil
}

// dropFilter holds the kinds a netstack drops on arrival; its zero value
// drops nothing.
type dropFilter struct{ kinds atomic.Uint32 }

// set replaces the kinds dropped.
func (f *dropFilter) set(kinds []string) error {
	var k dropKinds
	for _, s := range kinds {
		b, ok := dropBits[s]
		if !ok {
			return fmt.Errorf("harness: drop: %q is not one of %s", s, strings.Join([]string{DropICMP, DropDNS, DropTCP}, ", "))
		}
		k |= b
	}
	f.kinds.Store(uint32(k))
	return nil
}

// drops reports whether the IP packet p is of a kind dropped now.
func (f *dropFilter) drops(p []byte) bool {
	k := dropKinds(f.kinds.Load())
	if k == 0 {
		return false
	}
	var proto uint8
	var payload []byte
	switch p[0] >> 4 {
	case 4:
		ip := header.IPv4(p)
		if !ip.IsValid(len(p)) {
			return false
		}
		proto, payload = ip.Protocol(), ip.Payload()
	case 6:
		ip := header.IPv6(p)
		if !ip.IsValid(len(p)) {
			return false
		}
		proto, payload = ip.NextHeader(), ip.Payload()
	default:
		return false
	}
	switch proto {
	case uint8(header.ICMPv4ProtocolNumber), uint8(header.ICMPv6ProtocolNumber):
		return k&dropICMP != 0
	case uint8(header.TCPProtocolNumber):
		return k&dropTCP != 0
	case uint8(header.UDPProtocolNumber):
		return k&dropDNS != 0 && len(payload) >= header.UDPMinimumSize && header.UDP(payload).DestinationPort() == 53
	}
	return false
}
