// Package accept takes the next connection from a listener and rides out the
// errors a busy server sees and recovers from (out of file descriptors, a
// connection aborted before it was accepted) with back-off, as net/http's
// Server does, so that one burst of "too many open files" does not stop a
// server for good. Every server of the project that runs its own accept loop
// uses it.
package accept

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// Back-off between two tries after a transient error: it starts at
// MinDelay and doubles up to MaxDelay, as in net/http.
const (
	MinDelay = 5 * time.Millisecond
	MaxDelay = time.Second
)

// Next returns the next connection of ln. A transient error (see
// [Transient]) is retried after a back-off; any other error is returned, as
// is ctx's error when ctx ends first. Close ln to end a blocked Next.
func Next(ctx context.Context, ln net.Listener) (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !Transient(err) {
			return nil, err
		}
		delay = min(max(2*delay, MinDelay), MaxDelay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// Transient reports whether an Accept error may pass: the process or the
// system is out of descriptors or memory for now, or one connection was
// aborted before it was accepted.
func Transient(err error) bool {
	var ne net.Error
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS) ||
		errors.Is(err, syscall.ENOMEM) || (errors.As(err, &ne) && ne.Timeout())
}
