package harness

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/accept"
)

// SOCKS5 is a SOCKS5 server (RFC 1928) for the CONNECT command without
// authentication: enough for curl, Go's x/net/proxy and load generators to
// reach the lab's tunnel from other processes. It is written here because
// the maintained SOCKS5 server libraries are not served by this project's
// module proxy, and CONNECT alone is small.
//
// Names in requests are resolved by Dial, so SOCKS5 clients that send host
// names (curl's socks5h://) reach the lab's names such as TLSHost.
type SOCKS5 struct {
	// Dial opens the upstream connection. Required.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// HandshakeTimeout bounds the SOCKS negotiation and the upstream dial;
	// zero means 30s.
	HandshakeTimeout time.Duration

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	ctx    context.Context // cancelled by Close: aborts pending dials
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// ListenSOCKS5 listens on addr and serves there a SOCKS5 ingress whose
// connections dial, until Close. ctx bounds the listen only: once it is
// done, ListenSOCKS5 returns its error and serves nothing.
func ListenSOCKS5(ctx context.Context, addr string, dial func(ctx context.Context, network, address string) (net.Conn, error)) (*SOCKS5, error) {
	// Listening on a literal address does not look at ctx.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &SOCKS5{Dial: dial}
	if err := s.Start(ln); err != nil {
		ln.Close()
		return nil, err
	}
	return s, nil
}

// Start serves ln until Close.
func (s *SOCKS5) Start(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil || s.closed {
		return errors.New("harness: SOCKS5 server already started")
	}
	s.ln = ln
	s.conns = make(map[net.Conn]struct{})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.accept()
	return nil
}

// Addr is the listening address.
func (s *SOCKS5) Addr() net.Addr { return s.ln.Addr() }

// Close closes the listener and every connection, and waits for the
// server's goroutines.
func (s *SOCKS5) Close() error {
	s.mu.Lock()
	if s.closed || s.ln == nil {
		s.closed = true
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.cancel()
	err := s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// track registers c for Close; false means the server is closing.
func (s *SOCKS5) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *SOCKS5) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

func (s *SOCKS5) accept() {
	defer s.wg.Done()
	for {
		c, err := accept.Next(s.ctx, s.ln)
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1) // under mu, so that Close's Wait cannot miss it
		s.mu.Unlock()
		go s.serve(c)
	}
}

// replyTimeout bounds the write of a failure reply once the handshake's
// deadline has passed.
const replyTimeout = 5 * time.Second

// SOCKS5 reply codes.
const (
	socksOK             = 0
	socksFailure        = 1
	socksNetUnreachable = 3
	socksHostUnreach    = 4
	socksRefused        = 5
	socksTTLExpired     = 6
	socksBadCommand     = 7
	socksBadAddress     = 8
)

func (s *SOCKS5) serve(c net.Conn) {
	defer s.wg.Done()
	defer s.untrack(c)
	timeout := s.HandshakeTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	_ = c.SetDeadline(time.Now().Add(timeout))
	addr, err := readRequest(c)
	if err != nil {
		var re replyError
		if errors.As(err, &re) {
			writeReply(c, byte(re))
		}
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	up, err := s.Dial(ctx, "tcp", addr)
	cancel()
	if err != nil {
		// A dial that timed out has used up the connection's deadline too:
		// the client is still owed its reply.
		_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
		writeReply(c, dialReply(err))
		return
	}
	if !s.track(up) {
		up.Close()
		return
	}
	defer s.untrack(up)
	if writeReply(c, socksOK) != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	splice(c, up)
}

type replyError byte

func (e replyError) Error() string { return "socks5: reply " + strconv.Itoa(int(e)) }

// readRequest reads the method negotiation and the request, and returns
// the target as host:port.
func readRequest(c net.Conn) (string, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return "", err
	}
	if hdr[0] != 5 {
		return "", errors.New("socks5: not version 5")
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", err
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == 0
	}
	if !noAuth {
		c.Write([]byte{5, 0xff})
		return "", errors.New("socks5: client offers no acceptable method")
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		return "", err
	}
	var req [4]byte
	if _, err := io.ReadFull(c, req[:]); err != nil {
		return "", err
	}
	if req[0] != 5 {
		return "", errors.New("socks5: bad request version")
	}
	var host string
	switch req[3] {
	case 1, 4:
		b := make([]byte, 4)
		if req[3] == 4 {
			b = make([]byte, 16)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			return "", err
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case 3:
		var n [1]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return "", err
		}
		b := make([]byte, n[0])
		if _, err := io.ReadFull(c, b); err != nil {
			return "", err
		}
		host = string(b)
	default:
		return "", replyError(socksBadAddress)
	}
	var port [2]byte
	if _, err := io.ReadFull(c, port[:]); err != nil {
		return "", err
	}
	if req[1] != 1 { // only CONNECT
		return "", replyError(socksBadCommand)
	}
	return net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port[:])))), nil
}

func writeReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
	return err
}

func dialReply(err error) byte {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return socksHostUnreach
	case errors.Is(err, context.DeadlineExceeded):
		return socksTTLExpired
	case errors.Is(err, ErrClientDown):
		return socksNetUnreachable
	case isRefused(err):
		return socksRefused
	}
	return socksFailure
}

// isRefused recognises a refused connection from the host's stack
// (ECONNREFUSED) and from gVisor's, which reports it only as text.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "refused")
}

type closeWriter interface{ CloseWrite() error }

// splice copies both ways until both directions end. A direction that
// ends cleanly half-closes the other side, so request/response protocols
// that rely on it keep working; an error tears both down.
func splice(a, b net.Conn) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pipe(b, a)
	}()
	pipe(a, b)
	wg.Wait()
}

func pipe(dst, src net.Conn) {
	_, err := io.Copy(dst, src)
	if cw, ok := dst.(closeWriter); ok && err == nil {
		if cw.CloseWrite() == nil {
			return
		}
	}
	dst.Close()
	src.Close()
}
