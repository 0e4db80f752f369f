package prober

import (
	"context"
	"net"
	"syscall"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// TCPSocket performs one kubelet-style tcpSocket probe of address
// ("host:port"): a TCP connection opened within timeout passes and is
// closed at once; a refused connection or a timeout fails. Nothing is sent
// or read, so a server that accepts connections passes whatever it would
// answer: a health server reporting a dead tunnel passes as long as it
// listens. On the host network the socket lingers 1 s on close, as the
// kubelet's probe dialer sets, so probes leave no TIME_WAIT behind. dialer
// opens the connection; nil means the host network. Ending ctx also ends
// the probe.
func TCPSocket(ctx context.Context, address string, timeout time.Duration, dialer check.Dialer) Result {
	return timed(func() Result { return tcpSocket(ctx, address, timeout, dialer) })
}

func tcpSocket(ctx context.Context, address string, timeout time.Duration, dialer check.Dialer) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if dialer == nil {
		dialer = &net.Dialer{Control: lingerOneSecond}
	}
	conn, err := dialer.DialContext(ctx, "tcp", address)
	if err != nil {
		// The kubelet turns every dial error into a failure, timeouts
		// included.
		return Result{Outcome: Failure, Err: err}
	}
	_ = conn.Close()
	return Result{Outcome: Success}
}

// lingerOneSecond sets SO_LINGER to one second, as the kubelet's
// ProbeDialer does.
func lingerOneSecond(_, _ string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		_ = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 1})
	})
}
