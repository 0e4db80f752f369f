package middleware

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// bindControl returns a net.Dialer Control that binds the socket to iface.
func bindControl(iface string) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = bindToDevice(int(fd), iface) }); cerr != nil {
			return cerr
		}
		return err
	}
}

func bindToDevice(fd int, iface string) error {
	if err := unix.SetsockoptString(fd, unix.SOL_SOCKET, unix.SO_BINDTODEVICE, iface); err != nil {
		return fmt.Errorf("bind to interface %s: %w", iface, os.NewSyscallError("setsockopt", err))
	}
	return nil
}

// boundPingSocket opens an unprivileged ICMP socket for ip's family bound
// to iface, as golang.org/x/net/icmp opens its own: a datagram socket of
// the ICMP protocol, handed to the net package as a file.
func boundPingSocket(ip netip.Addr, iface string) (net.PacketConn, error) {
	family, proto := unix.AF_INET, unix.IPPROTO_ICMP
	if ip.Is6() {
		family, proto = unix.AF_INET6, unix.IPPROTO_ICMPV6
	}
	s, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if err := bindToDevice(s, iface); err != nil {
		unix.Close(s)
		return nil, err
	}
	f := os.NewFile(uintptr(s), "bound icmp")
	defer f.Close()
	return net.FilePacketConn(f)
}
