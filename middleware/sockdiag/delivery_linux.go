package sockdiag

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// readDelivery dumps the TCP sockets of both families and keeps those
// whose local address is in local. A dump the socket table's changes
// interrupted is used as far as it got: each socket read is a fact of its
// own, and the monitor compares only sockets read twice.
func readDelivery(local map[netip.Addr]bool) (middleware.Delivery, error) {
	out := middleware.Delivery{}
	if len(local) == 0 {
		return out, nil // an interface without addresses has no sockets
	}
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		socks, err := netlink.SocketDiagTCPInfo(family)
		if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
			return nil, fmt.Errorf("sock_diag: %w", err)
		}
		for _, s := range socks {
			if s.InetDiagMsg == nil || s.TCPInfo == nil {
				continue
			}
			src, ok := netip.AddrFromSlice(s.InetDiagMsg.ID.Source)
			if !ok || !local[src.Unmap()] {
				continue
			}
			c := s.InetDiagMsg.ID.Cookie
			out[uint64(c[1])<<32|uint64(c[0])] = uint64(s.TCPInfo.Delivered) + s.TCPInfo.Bytes_acked
		}
	}
	return out, nil
}
