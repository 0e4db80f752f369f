package check

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// ErrICMPNotPermitted is wrapped by the error of an ICMP check on the host
// network where the kernel refuses this process an unprivileged ICMP
// socket. Check for it with errors.Is to fall back to another check, as
// the upstream VPN client falls back to a DNS query (see [Fallback]).
var ErrICMPNotPermitted = errors.New("ICMP not permitted")

// ICMP passes when Address answers an ICMP echo request: the lightest
// check there is, one small packet each way and no connection, which a
// firewall or a provider may block, though.
//
// Without a Dialer it uses the host's unprivileged ICMP socket (Linux's
// "ping socket"), which needs no privilege but is open only to the groups
// in the kernel setting net.ipv4.ping_group_range; elsewhere it fails with
// an error wrapping ErrICMPNotPermitted that says so. With a Dialer the
// echo goes through it: DialContext(ctx, "ping4" or "ping6", host) must
// return a connection that sends each Write as one ICMP message and reads
// replies, as a WireGuard netstack's does (harness.Client,
// wireguard-go's netstack.Net); a Dialer without ICMP (a SOCKS5 proxy)
// fails every check with its own error.
//
// The reply must carry the request's sequence number and data; its
// identifier is not compared, since ping sockets set their own. Other ICMP
// messages, such as destination unreachable, are ignored: the deadline
// decides. An ICMP check is safe for concurrent use.
type ICMP struct {
	// Address is the host to ping: an IP address, or a name resolved by
	// the Dialer (by the host's resolver without one).
	Address string
	// Dialer carries the echo; nil means the host's ICMP socket.
	Dialer Dialer
	// Size, when positive, is the size of the echo request's IP packet,
	// headers included (20 bytes of IPv4 or 40 of IPv6, and 8 of ICMP),
	// padded with random data: a probe of the path MTU. On a socket of
	// this host's (no Dialer, or a BoundDialer) it is sent with Don't
	// Fragment whatever MTU the kernel learnt for the path, so that a
	// path that cannot carry it drops it (or, on the first hop, refuses
	// it) rather than fragment it. Zero: 16 bytes of data, 44 in all.
	Size int
}

// MinICMPSize is the least Size of an ICMP check over IPv6: headers and
// the 16 bytes of data a reply is matched by.
const MinICMPSize = 40 + 8 + 16

var _ Checker = ICMP{}

// String names the check as its errors do: "icmp 1.1.1.1".
func (c ICMP) String() string { return "icmp " + c.Address }

// echoSeq numbers the echo requests of every ICMP check of the process.
var echoSeq atomic.Uint32

// Check sends one echo request and waits for its reply until ctx ends.
func (c ICMP) Check(ctx context.Context) error {
	conn, v6, err := c.dial(ctx)
	if err != nil {
		return newStepError(ctx, "icmp", c.Address, "socket", err)
	}
	defer conn.Close()
	defer endWithContext(ctx, conn)()

	data, err := c.dataSize(v6)
	if err != nil {
		return newStepError(ctx, "icmp", c.Address, "echo", err)
	}
	if c.Size > 0 {
		if df, ok := conn.(interface{ setDontFragment(v6 bool) error }); ok {
			if err := df.setDontFragment(v6); err != nil {
				return newStepError(ctx, "icmp", c.Address, "socket", err)
			}
		}
	}
	req := icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{Seq: int(echoSeq.Add(1) & 0xffff), Data: make([]byte, data)}}
	proto := 1 // ICMP for IPv4
	if v6 {
		req.Type, proto = ipv6.ICMPTypeEchoRequest, 58
	}
	echo := req.Body.(*icmp.Echo)
	_, _ = rand.Read(echo.Data)
	b, err := req.Marshal(nil) // the socket fills in an IPv6 checksum
	if err != nil {
		return newStepError(ctx, "icmp", c.Address, "echo", err)
	}
	if _, err := conn.Write(b); err != nil {
		return newStepError(ctx, "icmp", c.Address, "echo", err)
	}
	buf := make([]byte, max(1500, 8+data))
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return newStepError(ctx, "icmp", c.Address, "echo reply", err)
		}
		m, err := icmp.ParseMessage(proto, buf[:n])
		if err != nil {
			continue // not ICMP: not ours
		}
		if r, ok := m.Body.(*icmp.Echo); ok && (m.Type == ipv4.ICMPTypeEchoReply || m.Type == ipv6.ICMPTypeEchoReply) &&
			r.Seq == echo.Seq && bytes.Equal(r.Data, echo.Data) {
			return nil
		}
	}
}

// dataSize returns how many bytes of data make the echo request's IP
// packet Size bytes long (16 without a Size).
func (c ICMP) dataSize(v6 bool) (int, error) {
	if c.Size <= 0 {
		return 16, nil
	}
	headers := 20 + 8
	if v6 {
		headers = 40 + 8
	}
	if c.Size < headers+16 || c.Size > 65535 {
		return 0, fmt.Errorf("size %d is not between %d and 65535 bytes", c.Size, headers+16)
	}
	return c.Size - headers, nil
}

// dial opens the echo socket, through the Dialer or the host's, and says
// whether it speaks ICMPv6.
func (c ICMP) dial(ctx context.Context) (conn net.Conn, v6 bool, err error) {
	host := strings.TrimSuffix(strings.TrimPrefix(c.Address, "["), "]")
	ip, err := netip.ParseAddr(host)
	if c.Dialer != nil {
		v6 = err == nil && ip.Unmap().Is6()
		network := "ping4"
		if v6 {
			network = "ping6"
		}
		conn, err = dialLive(ctx, c.Dialer, network, host)
		return conn, v6, err
	}
	if err != nil {
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, false, err
		}
		ip = ips[0] // LookupNetIP returns an error rather than no address
	}
	ip = ip.Unmap()
	conn, err = listenHostPing(ip, "")
	return conn, ip.Is6(), err
}

// listenHostPing opens an unprivileged ICMP socket towards ip, bound to
// the interface iface when it is not empty (see BoundDialer).
func listenHostPing(ip netip.Addr, iface string) (net.Conn, error) {
	pc, err := pingSocket(ip, iface)
	if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
		return nil, fmt.Errorf("%w: the kernel gives unprivileged ICMP sockets only to the groups in net.ipv4.ping_group_range (%s); "+
			"widen it (sysctl net.ipv4.ping_group_range=\"0 2147483647\"), or check with a DNS query instead", ErrICMPNotPermitted, pingGroupRange())
	}
	if err != nil {
		return nil, err
	}
	return &hostPingConn{PacketConn: pc, to: &net.UDPAddr{IP: ip.AsSlice(), Zone: ip.Zone()}}, nil
}

// pingGroupRange describes the kernel's net.ipv4.ping_group_range.
func pingGroupRange() string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ping_group_range")
	if err != nil {
		return "unreadable here"
	}
	return fmt.Sprintf("here %q", strings.Join(strings.Fields(string(b)), " "))
}

// hostPingConn is a host ICMP socket as a connection to one address.
type hostPingConn struct {
	net.PacketConn
	to *net.UDPAddr
}

func (c *hostPingConn) Write(b []byte) (int, error) { return c.WriteTo(b, c.to) }

// setDontFragment makes the socket send with Don't Fragment, whatever MTU
// the kernel learnt for the path (see ICMP.Size).
func (c *hostPingConn) setDontFragment(v6 bool) error {
	sc, ok := c.PacketConn.(syscall.Conn)
	if !ok {
		return errors.New("the ICMP socket gives no file descriptor to set Don't Fragment on")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	return setProbePMTU(raw, v6)
}
func (c *hostPingConn) RemoteAddr() net.Addr { return c.to }

// Read returns the next message from the connection's address.
func (c *hostPingConn) Read(b []byte) (int, error) {
	for {
		n, from, err := c.ReadFrom(b)
		if err != nil {
			return n, err
		}
		if u, ok := from.(*net.UDPAddr); ok && u.IP.Equal(c.to.IP) {
			return n, nil
		}
	}
}
