//go:build !linux

package check

import (
	"errors"
	"golang.org/x/net/icmp"
	"net"
	"net/netip"
	"syscall"
)

var errNoBind = errors.New("binding a socket to an interface needs Linux")

func bindControl(string) func(network, address string, c syscall.RawConn) error {
	return func(string, string, syscall.RawConn) error { return errNoBind }
}

func (boundDialer) canBind() error { return errNoBind }

// BindToInterface needs Linux.
func BindToInterface(int, netip.Addr, string) error { return errNoBind }

func pingSocket(ip netip.Addr, iface string) (net.PacketConn, error) {
	if iface != "" {
		return nil, errNoBind
	}
	network, laddr := "udp4", "0.0.0.0"
	if ip.Is6() {
		network, laddr = "udp6", "::"
	}
	return icmp.ListenPacket(network, laddr)
}

func setProbePMTU(syscall.RawConn, bool) error { return errNoBind }
