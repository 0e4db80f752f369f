package harness

import (
	"context"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/proxy"
)

// startSOCKS5 serves a SOCKS5 ingress on loopback that dials with dial.
func startSOCKS5(t *testing.T, s *SOCKS5) net.Addr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return ln.Addr()
}

// listenAndHold accepts connections on loopback until the test ends.
func listenAndHold(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open files: %v", err)
	}
	return len(fds)
}

func TestSOCKS5KeepsAcceptingAfterRunningOutOfFiles(t *testing.T) {
	target := listenAndHold(t)
	var d net.Dialer
	addr := startSOCKS5(t, &SOCKS5{Dial: d.DialContext})

	// As `ulimit -n 200` with 300 connections: the process runs out of
	// descriptors while connections wait in the listener's backlog, so
	// the ingress's accept fails with EMFILE.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	low := lim
	low.Cur = uint64(openFiles(t) + 30)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(restore)
	var conns []net.Conn
	refused := 0
	for range 100 {
		c, err := net.DialTimeout("tcp", addr.String(), time.Second)
		if err != nil {
			refused++
			continue
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	restore()
	if refused == 0 {
		t.Fatal("the process never ran out of descriptors: the test proves nothing")
	}

	socks, err := proxy.SOCKS5("tcp", addr.String(), nil, &net.Dialer{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := socks.(proxy.ContextDialer).DialContext(ctx, "tcp", target)
	if err != nil {
		t.Fatalf("CONNECT after the descriptors came back: %v", err)
	}
	c.Close()
}

func TestSOCKS5RepliesWhenTheDialTimesOut(t *testing.T) {
	hang := func(ctx context.Context, _, _ string) (net.Conn, error) { <-ctx.Done(); return nil, ctx.Err() }
	addr := startSOCKS5(t, &SOCKS5{Dial: hang, HandshakeTimeout: 100 * time.Millisecond})
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	// No authentication; CONNECT 127.0.0.1:9.
	if _, err := c.Write([]byte{5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 9}); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, 2+10)
	if _, err := io.ReadFull(c, reply); err != nil {
		t.Fatalf("no reply to a CONNECT whose dial timed out: %v", err)
	}
	if reply[3] != socksTTLExpired {
		t.Errorf("reply code %d, want %d (TTL expired)", reply[3], socksTTLExpired)
	}
}
