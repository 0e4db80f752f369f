package prober

import (
	"context"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// TCPSocket performs one tcpSocket probe of address as the kubelet of
// [DefaultKubeletVersion] does; see [KubeletVersion.TCPSocket].
func TCPSocket(ctx context.Context, address string, timeout time.Duration, dialer check.Dialer) Result {
	return DefaultKubeletVersion.TCPSocket(ctx, address, timeout, dialer)
}

// TCPSocket performs one tcpSocket probe of address ("host:port") as the
// kubelet of version v does: a TCP connection opened within timeout passes
// and is closed at once; a refused connection or a timeout fails. Nothing
// is sent or read, so a server that accepts connections passes whatever it
// would answer: a health server reporting a dead tunnel passes as long as
// it listens. On the host network the socket lingers 1 s on close from
// 1.27 on, as the kubelet's probe dialer sets. dialer opens the
// connection; nil means the host network. Ending ctx also ends the probe.
func (v KubeletVersion) TCPSocket(ctx context.Context, address string, timeout time.Duration, dialer check.Dialer) Result {
	return timed(func() Result { return tcpSocket(ctx, v, address, timeout, dialer) })
}

func tcpSocket(ctx context.Context, v KubeletVersion, address string, timeout time.Duration, dialer check.Dialer) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if dialer == nil {
		dialer = v.dialer()
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
