package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// processTunnel is a lab whose ends are processes that can exit of their
// own accord (harness.OpenVPN).
type processTunnel interface {
	Exits() <-chan error
	ServerExits() <-chan error
}

// watchExits follows a lab whose ends are processes: the returned context
// ends when the server's openvpn exits on its own (the far side is gone,
// and nothing after that is a measurement) and, with clientEnds, when the
// client's does (nothing restarts it); otherwise each client exit is
// logged on stderr, and the lab's restart (a heal, its control) brings it
// back. stop stops following and returns why the context ended, nil if
// no process did. A WireGuard lab has no processes: ctx as it is.
func watchExits(ctx context.Context, lab labTunnel, clientEnds bool, stderr io.Writer) (_ context.Context, stop func() error) {
	p, ok := lab.(processTunnel)
	if !ok {
		return ctx, func() error { return nil }
	}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case err := <-p.ServerExits():
				cancel(fmt.Errorf("the lab's VPN server exited: %w", err))
				return
			case err := <-p.Exits():
				if clientEnds {
					cancel(fmt.Errorf("the lab's VPN client exited: %w", err))
					return
				}
				fmt.Fprintf(stderr, "lab: the VPN client exited (%v); it is down until a restart\n", err)
			}
		}
	})
	return ctx, sync.OnceValue(func() error {
		close(done)
		wg.Wait()
		cause := context.Cause(ctx)
		cancel(nil)
		if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
			return nil // the parent's end, or none
		}
		return cause
	})
}
