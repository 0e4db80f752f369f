package sockdiag

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// Delivery reads the delivery of the TCP sockets on Interface (see the
// package doc). Its zero value reads nothing: Interface is required.
type Delivery struct {
	// Interface is the tunnel's network interface (wg0, tun0), in the
	// process's network namespace.
	Interface string
}

var _ middleware.DeliverySource = Delivery{}

// ReadDelivery reads the socket table once. An interface that is not
// there (yet) is an error, as a tunnel that is down reads.
func (d Delivery) ReadDelivery() (middleware.Delivery, error) {
	local, err := interfaceAddrs(d.Interface)
	if err != nil {
		return nil, err
	}
	return readDelivery(local)
}

// interfaceAddrs returns the addresses of the interface named name.
func interfaceAddrs(name string) (map[netip.Addr]bool, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("delivery of %s: %w", name, err)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return nil, fmt.Errorf("delivery of %s: %w", name, err)
	}
	local := map[netip.Addr]bool{}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				local[ip.Unmap()] = true
			}
		}
	}
	return local, nil
}
