package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// dialTCP4 connects to ap through the client's tun0 as check.BoundDialer
// would in the client's namespace, but holds the namespace's thread only
// to open the socket: the connect, which takes as long as the tunnel
// makes it, runs on any thread. A dial inside netns.Do held a locked OS
// thread for the whole handshake, and a load of hundreds of connections
// through a slow tunnel made as many threads.
func (o *OpenVPN) dialTCP4(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	var fd int
	err := o.client.Do(func() (err error) {
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0); err != nil {
			return os.NewSyscallError("socket", err)
		}
		if err = check.BindToInterface(fd, ap.Addr(), OpenVPNDevice); err != nil {
			unix.Close(fd)
		}
		return err
	})
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: err}
	}
	f := os.NewFile(uintptr(fd), "tcp "+ap.String()) // non-blocking: the runtime's poller waits for it
	defer f.Close()                                  // net.FileConn keeps a copy
	if err := connect(ctx, f, fd, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: err}
	}
	return net.FileConn(f)
}

// connect connects the non-blocking socket fd (f's) to sa, waiting for
// the handshake until ctx ends.
func connect(ctx context.Context, f *os.File, fd int, sa unix.Sockaddr) error {
	err := unix.Connect(fd, sa)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINPROGRESS) {
		return os.NewSyscallError("connect", err)
	}
	if d, ok := ctx.Deadline(); ok {
		if err := f.SetWriteDeadline(d); err != nil {
			return err
		}
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var result error
	werr := rc.Write(func(fd uintptr) bool {
		// Writable once the handshake ended: SO_ERROR says how.
		soErr, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		switch {
		case err != nil:
			result = os.NewSyscallError("getsockopt", err)
		case soErr != 0:
			result = os.NewSyscallError("connect", syscall.Errno(soErr))
		default:
			if _, err := unix.Getpeername(int(fd)); errors.Is(err, unix.ENOTCONN) {
				return false // not yet: wait until writable
			}
		}
		return true
	})
	if werr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("connect: %w", werr)
	}
	return result
}
