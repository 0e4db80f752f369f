package loadgen

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// hostDialer returns the dialer of host-network runs: a plain net.Dialer,
// or one per source address used round robin. Each source is bound with
// IP_BIND_ADDRESS_NO_PORT (see bindNoPort), so the kernel picks the source
// port at connect() for the full 4-tuple rather than reserving a port per
// address at bind(): with it, one source address serves up to 28,232
// connections to each destination instead of 28,232 in all.
func hostDialer(sources []netip.Addr) check.Dialer {
	if len(sources) == 0 {
		return &net.Dialer{}
	}
	ds := make([]*net.Dialer, len(sources))
	for i, a := range sources {
		ds[i] = &net.Dialer{
			LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(a.Unmap(), 0)),
			Control:   bindNoPort,
		}
	}
	var next atomic.Uint64
	return check.DialerFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
		d := ds[(next.Add(1)-1)%uint64(len(ds))]
		return d.DialContext(ctx, network, addr)
	})
}
