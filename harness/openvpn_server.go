package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netns"
	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// OpenVPNServerConfig configures an OpenVPN server. Files is required.
type OpenVPNServerConfig struct {
	// Files are the lab's files (WriteOpenVPNFiles).
	Files OpenVPNFiles
	// Binary is the openvpn program; default "openvpn", found in PATH.
	Binary string
	// StartTimeout bounds how long openvpn may take to listen at Start;
	// default 30s.
	StartTimeout time.Duration
}

// OpenVPNServer is the server end of an OpenVPN lab on its own: the real
// openvpn with Files' server configuration on a kernel TUN device
// (OpenVPNDevice, ServerTunnelAddr) in this process's network namespace, as
// a server container runs it, and the lab's targets at ServerTunnelAddr on
// kernel sockets (the TLS target with Files' target certificate, the
// sinks, DNS; the kernel answers ICMP echoes). The OpenVPN lab runs one in
// a namespace of its own.
//
// Start and Close must not run concurrently; the other methods are safe
// for concurrent use.
type OpenVPNServer struct {
	cfg    OpenVPNServerConfig
	ns     *netns.NS // where it runs; nil: this process's namespace
	proc   *openvpnProcess
	svc    services
	closed bool // Close ran: the targets are stopped
	exits  chan error
	watch  sync.WaitGroup
}

// NewOpenVPNServer returns a server; it starts nothing until Start.
func NewOpenVPNServer(cfg OpenVPNServerConfig) *OpenVPNServer {
	cfg.Binary = cmp.Or(cfg.Binary, "openvpn")
	cfg.StartTimeout = cmp.Or(cfg.StartTimeout, 30*time.Second)
	return &OpenVPNServer{cfg: cfg, exits: make(chan error, 1)}
}

// Start starts openvpn, waits until it listens (an openvpn that exits or
// does not get there within StartTimeout fails Start with its last
// output), then starts the targets on its tun0. On error everything
// started is closed again.
func (s *OpenVPNServer) Start(ctx context.Context) (err error) {
	if s.proc != nil {
		return errors.New("harness: OpenVPN server already started")
	}
	if err := OpenVPNAvailable(s.cfg.Binary); err != nil {
		return err
	}
	cert, err := s.cfg.Files.TargetCert()
	if err != nil {
		return fmt.Errorf("harness: the TLS target's certificate: %w", err)
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	if s.proc, err = startOpenVPN(s.ns, s.cfg.Binary, s.cfg.Files.ServerConf()); err != nil {
		return err
	}
	p := s.proc
	if err := p.waitReady(ctx); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	s.watch.Go(func() {
		<-p.done
		if crashed, err := p.crashed(); crashed {
			s.exits <- fmt.Errorf("%w: %s", err, p.output())
		}
	})
	return s.svc.start(nsNet{s.ns}, ServerTunnelAddr, cert)
}

// Exits receives an error if the server's openvpn exits of its own accord:
// the far side is gone for good.
func (s *OpenVPNServer) Exits() <-chan error { return s.exits }

// PID is the process ID of the server's openvpn, 0 before Start.
func (s *OpenVPNServer) PID() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// SinkStats is what the server's sink received.
func (s *OpenVPNServer) SinkStats() sink.Stats { return s.svc.sink.Stats() }

// Close stops the targets and openvpn and waits for them.
func (s *OpenVPNServer) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.svc.close()
	if s.proc != nil {
		s.proc.stop()
	}
	s.watch.Wait()
	return err
}
