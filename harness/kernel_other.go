//go:build !linux

package harness

import (
	"errors"
	"net/netip"
	"syscall"

	"golang.zx2c4.com/wireguard/tun"
)

var errNoKernelTUN = errors.New("harness: a kernel TUN client needs Linux")

func createKernelTUN(string, int) (tun.Device, error) { return nil, errNoKernelTUN }

func configureKernelTUN(string, netip.Prefix) error { return errNoKernelTUN }

func dieWithParent() *syscall.SysProcAttr { return nil }
