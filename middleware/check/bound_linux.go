package check

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// bindControl returns a net.Dialer Control that binds the socket to iface
// and refuses a destination the kernel does not route through it.
func bindControl(iface string) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, c syscall.RawConn) error {
		dst, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("bound dial to %q: %w", address, err)
		}
		if cerr := c.Control(func(fd uintptr) { err = BindToInterface(int(fd), dst.Addr(), iface) }); cerr != nil {
			return cerr
		}
		return err
	}
}

// BindToInterface binds the socket fd to iface, as a BoundDialer's are,
// and refuses dst when the kernel does not route it through iface. Both
// happen in the calling thread's network namespace: for a socket opened
// in another, call it there.
func BindToInterface(fd int, dst netip.Addr, iface string) error {
	if err := bindToDevice(fd, iface); err != nil {
		return err
	}
	return routesThrough(dst, iface)
}

// routesThrough returns nil when the kernel's route to ip, looked up as
// the users' traffic would be (no interface asked for), leaves by iface,
// and else an error wrapping ErrNoRouteThrough that says where it leads. A
// socket bound to iface with no route for ip is sent on-link rather than
// refused: binding alone would let a probe out after the route through the
// tunnel was deleted, while every application gets "no route".
func routesThrough(ip netip.Addr, iface string) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w %s to %v: %s", ErrNoRouteThrough, iface, ip, fmt.Sprintf(format, args...))
	}
	routes, err := netlink.RouteGet(ip.Unmap().AsSlice())
	if err != nil {
		return fail("%v", err)
	}
	if len(routes) == 0 {
		return fail("the kernel has none")
	}
	dev, err := net.InterfaceByName(iface)
	if err != nil {
		return fmt.Errorf("bind to interface %s: %w", iface, err)
	}
	if r := routes[0]; r.LinkIndex != dev.Index {
		via := fmt.Sprintf("interface %d", r.LinkIndex)
		if other, err := net.InterfaceByIndex(r.LinkIndex); err == nil {
			via = other.Name
		}
		if r.Type == unix.RTN_LOCAL {
			return fail("it is an address of this host, answered by its own kernel (%s)", via)
		}
		return fail("the kernel routes it by %s", via)
	}
	return nil
}

func bindToDevice(fd int, iface string) error {
	err := unix.SetsockoptString(fd, unix.SOL_SOCKET, unix.SO_BINDTODEVICE, iface)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EPERM):
		// Not wrapped as EPERM: that is what an ICMP socket outside
		// ping_group_range says, and the remedy differs.
		return fmt.Errorf("%w: bind to interface %s: %v: Linux before 5.7 asks CAP_NET_RAW for it", ErrBindNotPermitted, iface, err)
	}
	return fmt.Errorf("bind to interface %s: %w", iface, os.NewSyscallError("setsockopt", err))
}

// canBind opens a socket, binds it to the interface and closes it: whether
// this process may bind at all. An interface that is not there yet says
// ENODEV.
func (d boundDialer) canBind() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("socket", err)
	}
	defer unix.Close(s)
	return bindToDevice(s, d.iface)
}

// pingSocket opens an unprivileged ICMP socket for ip's family, bound to
// iface unless it is empty, as golang.org/x/net/icmp opens its own: a
// datagram socket of the ICMP protocol, handed to the net package as a
// file.
func pingSocket(ip netip.Addr, iface string) (net.PacketConn, error) {
	family, proto := unix.AF_INET, unix.IPPROTO_ICMP
	if ip.Is6() {
		family, proto = unix.AF_INET6, unix.IPPROTO_ICMPV6
	}
	s, err := unix.Socket(family, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	if iface != "" {
		if err := bindToDevice(s, iface); err != nil {
			unix.Close(s)
			return nil, err
		}
		if err := routesThrough(ip, iface); err != nil {
			unix.Close(s)
			return nil, err
		}
	}
	f := os.NewFile(uintptr(s), "bound icmp")
	defer f.Close()
	return net.FilePacketConn(f)
}

// setProbePMTU makes the socket send with Don't Fragment and ignore the
// path MTU the kernel learnt (IP_PMTUDISC_PROBE): a probe of the path MTU
// must be neither fragmented nor refused for a size the path once lacked.
func setProbePMTU(raw syscall.RawConn, v6 bool) error {
	var err error
	cerr := raw.Control(func(fd uintptr) {
		if v6 {
			err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_PROBE)
			return
		}
		err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE)
	})
	if cerr != nil {
		return cerr
	}
	return os.NewSyscallError("setsockopt IP_MTU_DISCOVER", err)
}
