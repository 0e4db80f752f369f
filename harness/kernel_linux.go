package harness

import (
	"fmt"
	"net/netip"
	"syscall"

	"golang.zx2c4.com/wireguard/tun"
)

// createKernelTUN creates the kernel TUN device name, as a VPN client
// container does: it needs CAP_NET_ADMIN and /dev/net/tun. The device goes
// away with the process or when closed, so that each start makes a new
// interface (a new ifindex, counters from zero).
func createKernelTUN(name string, mtu int) (tun.Device, error) {
	d, err := tun.CreateTUN(name, mtu)
	if err != nil {
		return nil, fmt.Errorf("harness: kernel TUN device %s (needs CAP_NET_ADMIN and /dev/net/tun): %w", name, err)
	}
	return d, nil
}

// configureKernelTUN gives the device its in-tunnel address with the
// prefix of the tunnel's network and brings it up: the kernel's connected
// route then sends that network through the tunnel, and everything else
// the usual way (the link among it, so the tunnel's own packets never loop).
func configureKernelTUN(name string, addr netip.Prefix) error { return addrUp(name, addr) }

// dieWithParent makes a child process get SIGKILL when this one dies, so
// that not even a SIGKILL of the lab leaves an openvpn behind.
func dieWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
