//go:build unix

package sink

import (
	"context"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// ListenReusePort listens like net.Listen with SO_REUSEPORT set, so that
// several listeners, in one process or in several, share addr and the
// kernel spreads incoming connections across them. Use it to run one sink
// process per few thousand connections (see environment.md: 20,000 open
// files per process).
func ListenReusePort(ctx context.Context, network, addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(ctx, network, addr)
}
