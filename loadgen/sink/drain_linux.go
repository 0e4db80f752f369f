package sink

import (
	"context"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tunnelprobe/tunnelprobe/loadgen/internal/pace"
)

// waitDrained waits until the peer has acknowledged every byte written to
// c (the send queue, SIOCOUTQ, is empty), for at most grace or until ctx
// ends. It reports false, at once, when c has no socket to ask, and the
// caller should then close c gracefully instead of resetting it.
func waitDrained(ctx context.Context, c net.Conn, grace time.Duration) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	deadline := time.Now().Add(grace)
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 20*time.Millisecond) {
		var queued int
		var ioErr error
		if err := rc.Control(func(fd uintptr) {
			queued, ioErr = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
		}); err != nil || ioErr != nil {
			return true // closed or unknown: nothing left to wait for
		}
		if queued == 0 || !time.Now().Before(deadline) || !pace.Sleep(ctx, wait) {
			return true
		}
	}
}
