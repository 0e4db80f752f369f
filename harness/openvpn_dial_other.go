//go:build !linux

package harness

import (
	"context"
	"errors"
	"net"
	"net/netip"
)

// dialTCP4: an OpenVPN lab needs Linux.
func (o *OpenVPN) dialTCP4(context.Context, netip.AddrPort) (net.Conn, error) {
	return nil, errors.ErrUnsupported
}
