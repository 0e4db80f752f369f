package harness

import (
	"context"
	"errors"
	"time"
)

const restartPause = 20 * time.Millisecond

// Restart takes the client device down and brings a new one up with the
// same keys, as a heal or a VPN restart does: every connection through the
// old device is aborted, and new ones work once the new handshake
// completes. A client that is down is brought up.
//
// ctx can only stop a restart that has not begun: once the old device is
// closed, the new one is brought up whatever happens to ctx, so that a
// caller who gives up cannot leave the tunnel down. Concurrent restarts run
// one after the other.
func (c *Client) Restart(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.downLocked()
	return c.upLocked(context.WithoutCancel(ctx))
}

// Down takes the client device down, as a stopped VPN container does: flows
// through it break, and Dial fails with ErrClientDown until Up.
func (c *Client) Down() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peer == nil {
		return ErrClientDown
	}
	c.downLocked()
	return nil
}

func (c *Client) downLocked() {
	if c.peer == nil {
		return
	}
	c.peer.close()
	c.peer = nil
	c.downAt = time.Now()
	if c.cfg.OnDown != nil {
		c.cfg.OnDown()
	}
}

// Up brings a new client device up after Down; the first handshake follows
// at once. Once ctx is done, Up brings nothing up and returns ctx's error.
func (c *Client) Up(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.peer != nil {
		return errors.New("harness: client is up already")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.upLocked(ctx)
}

func (c *Client) upLocked(ctx context.Context) error {
	// WireGuard whitens handshake timestamps to 2^24 ns (~17 ms): a new
	// device's first initiation within that of the old one's last is
	// rejected by the server as a replay, and retried only after 5 s. A real
	// restart is never that fast, so pausing costs no realism.
	if wait := restartPause - time.Since(c.downAt); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	p, err := c.start()
	if err != nil {
		return err
	}
	c.peer = p
	return nil
}
