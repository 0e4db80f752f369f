//go:build !linux

package sockdiag

import (
	"errors"
	"net/netip"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

func readDelivery(map[netip.Addr]bool) (middleware.Delivery, error) {
	return nil, errors.New("sock_diag: the kernel's socket table is read on Linux only")
}
