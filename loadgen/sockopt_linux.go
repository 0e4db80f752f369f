package loadgen

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// bindNoPort sets IP_BIND_ADDRESS_NO_PORT on a socket about to be bound to
// a source address. net.Dialer calls Control before bind(), as needed.
func bindNoPort(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	}); err != nil {
		return err
	}
	return serr
}
