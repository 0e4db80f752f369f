package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tunnelprobe/tunnelprobe/internal/netns"
)

// OpenVPNClientConfig configures an OpenVPN client. Conf is required.
type OpenVPNClientConfig struct {
	// Conf is the client's configuration file (OpenVPNFiles.ClientConf).
	Conf string
	// Binary is the openvpn program; default "openvpn", found in PATH.
	Binary string
}

// OpenVPNClient is the client end of an OpenVPN lab on its own: the real
// openvpn with Conf on a kernel TUN device (OpenVPNDevice) in this
// process's network namespace, as a VPN container runs it. Restarts stop
// and start the process, as the VPN container's loop does; each makes a
// new tun0 once it has connected. The OpenVPN lab runs one in a namespace
// of its own.
//
// Every method is safe for concurrent use; Close ends its use.
type OpenVPNClient struct {
	cfg OpenVPNClientConfig
	ns  *netns.NS // where it runs; nil: this process's namespace

	mu    sync.Mutex // guards proc; Down, Up and Restart hold it to swap processes
	proc  *openvpnProcess
	exits chan error // its own exits
	watch sync.WaitGroup
}

// NewOpenVPNClient returns a client; it starts nothing until Start.
func NewOpenVPNClient(cfg OpenVPNClientConfig) *OpenVPNClient {
	cfg.Binary = cmp.Or(cfg.Binary, "openvpn")
	return &OpenVPNClient{cfg: cfg, exits: make(chan error, 1)}
}

// Start starts openvpn and returns once it runs, as a container's start
// does: it connects by itself (retrying every second), and Ready tells
// when it has.
func (c *OpenVPNClient) Start(ctx context.Context) error {
	if err := OpenVPNAvailable(c.cfg.Binary); err != nil {
		return err
	}
	return c.Up(ctx)
}

// Ready waits until the running openvpn says its tunnel is up, it exits,
// or ctx ends; an error says which, with its last output.
func (c *OpenVPNClient) Ready(ctx context.Context) error {
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p == nil {
		return ErrClientDown
	}
	return p.waitReady(ctx)
}

// Restart stops the client's openvpn and starts a new one, as a heal or
// the VPN container's loop does: every flow through the old tun0 breaks,
// and the new tun0 appears once the new process has connected. It returns
// once the new process runs. ctx can only stop a restart that has not
// begun.
func (c *OpenVPNClient) Restart(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.downLocked()
	return c.upLocked()
}

// Down stops the client's openvpn, as a stopped VPN container does.
func (c *OpenVPNClient) Down() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return ErrClientDown
	}
	c.downLocked()
	return nil
}

// Up starts a new client openvpn after Down (or after it exited); it
// returns once the process runs, as a container's start does.
func (c *OpenVPNClient) Up(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return errors.New("harness: the OpenVPN client is up already")
	}
	return c.upLocked()
}

func (c *OpenVPNClient) downLocked() {
	if c.proc != nil {
		c.proc.stop()
		c.proc = nil
	}
}

// upLocked starts the client's openvpn and watches it: if it exits on its
// own, it is down (proc nil) and Exits says so.
func (c *OpenVPNClient) upLocked() error {
	p, err := startOpenVPN(c.ns, c.cfg.Binary, c.cfg.Conf)
	if err != nil {
		return err
	}
	c.proc = p
	c.watch.Go(func() {
		<-p.done
		crashed, err := p.crashed()
		if !crashed {
			return
		}
		c.mu.Lock()
		if c.proc == p {
			c.proc = nil
		}
		c.mu.Unlock()
		select {
		case c.exits <- fmt.Errorf("%w: %s", err, p.output()):
		default: // one unread exit is enough to act on
		}
	})
	return nil
}

// Exits receives an error each time the client's openvpn exits of its own
// accord (it crashed, or was killed by someone else), not when Down,
// Restart or Close stopped it: a VPN container whose process died, which
// its orchestrator restarts. The client is down until Up.
func (c *OpenVPNClient) Exits() <-chan error { return c.exits }

// PID is the process ID of the client's openvpn, 0 while it is down.
func (c *OpenVPNClient) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return 0
	}
	return c.proc.cmd.Process.Pid
}

// setStatus stops ("stopped") or starts ("running") the client's openvpn,
// or does nothing when it is so already, in one hold of the lock (see
// Client.setStatus).
func (c *OpenVPNClient) setStatus(_ context.Context, status string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case status == "stopped" && c.proc != nil:
		c.downLocked()
	case status == "running" && c.proc == nil:
		return c.upLocked()
	}
	return nil
}

// status is "running" while the client's openvpn runs, "stopped"
// otherwise.
func (c *OpenVPNClient) status() string {
	if c.PID() == 0 {
		return "stopped"
	}
	return "running"
}

// Close stops the client's openvpn and waits until it is gone.
func (c *OpenVPNClient) Close() error {
	c.mu.Lock()
	c.downLocked()
	c.mu.Unlock()
	c.watch.Wait()
	return nil
}
