//go:build !linux

package check

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
)

var errNoBind = errors.New("binding a socket to an interface needs Linux")

func bindControl(string) func(network, address string, c syscall.RawConn) error {
	return func(string, string, syscall.RawConn) error { return errNoBind }
}

func (boundDialer) canBind() error { return errNoBind }

func boundPingSocket(netip.Addr, string) (net.PacketConn, error) { return nil, errNoBind }
