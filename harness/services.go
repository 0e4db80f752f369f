package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// serviceNet is where the server side's services listen: the server
// peer's netstack, or a network namespace of a kernel tunnel's server.
type serviceNet interface {
	ListenTCP(netip.AddrPort) (net.Listener, error)
	ListenUDP(netip.AddrPort) (net.PacketConn, error)
}

// labSinkReadBuffer is the read buffer of each of the lab's sink
// connections.
const labSinkReadBuffer = 4 << 10

// services are the server side's targets at its in-tunnel address: the
// TLS target on TLSPort, a discarding sink on SinkPort, an echoing one on
// EchoPort and a DNS server for the lab's names on DNSPort. The sinks
// speak the load generator's protocol (package loadgen/sink), so a load
// through the lab can ask for downloads.
type services struct {
	target     *TLSTarget
	sink, echo sink.Server
	dns        net.PacketConn
	stop       context.CancelFunc
	stopped    sync.WaitGroup
}

// start starts the services on n at addr, the TLS target with cert. They
// run until close, which also cleans up after an error here.
func (s *services) start(n serviceNet, addr netip.Addr, cert tls.Certificate) error {
	tl, err := n.ListenTCP(netip.AddrPortFrom(addr, TLSPort))
	if err != nil {
		return fmt.Errorf("harness: TLS target listen: %w", err)
	}
	s.target = StartTLSTarget(tl, cert)
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.echo.Echo = true
	// The lab's flows are thousands of slow ones: 16 KiB buffers held
	// 110-125 MB in the default suite's sinks (pprof).
	s.sink.ReadBuffer, s.echo.ReadBuffer = labSinkReadBuffer, labSinkReadBuffer
	for _, x := range []struct {
		sink *sink.Server
		port uint16
	}{{&s.sink, SinkPort}, {&s.echo, EchoPort}} {
		ln, err := n.ListenTCP(netip.AddrPortFrom(addr, x.port))
		if err != nil {
			return fmt.Errorf("harness: sink listen: %w", err)
		}
		s.stopped.Go(func() { _ = x.sink.Serve(ctx, ln) })
	}
	if s.dns, err = n.ListenUDP(netip.AddrPortFrom(addr, DNSPort)); err != nil {
		return fmt.Errorf("harness: DNS listen: %w", err)
	}
	s.stopped.Go(func() { serveDNS(s.dns, labHosts(addr)) })
	return nil
}

// close stops the services and waits for their goroutines.
func (s *services) close() error {
	var errs []error
	if s.target != nil {
		errs = append(errs, s.target.Close())
	}
	if s.dns != nil {
		s.dns.Close() // ends serveDNS
	}
	if s.stop != nil {
		s.stop()
	}
	s.stopped.Wait()
	return errors.Join(errs...)
}
