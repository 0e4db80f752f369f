package middleware_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// BenchmarkStatusServed measures the status endpoint through net/http's
// server: requests one after another on a connection that replays the
// same request and discards the answers, what a request costs the server,
// headers and all, without a client or a network in the measurement.
// bare is a handler that only writes "healthy\n", headers the same with
// the status's headers; text and json are held to bare. The four take
// turns, 1,000 requests each, so that a machine whose load changes
// changes all four alike; each op is one turn of all four, and the
// metrics are each one's ns per request and bare's speed over theirs
// (x-bare: 1 is as fast as bare). ci/bench-status.sh measures the same
// under wrk.
func BenchmarkStatusServed(b *testing.B) {
	m, err := middleware.New(passing(), middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		b.Fatal(err)
	}
	m.Probe(context.Background())
	body := []byte("healthy\n")
	noStore, ctText, nosniff := []string{"no-store"}, []string{"text/plain; charset=utf-8"}, []string{"nosniff"}
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) })
	headers := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// Assigned as the status assigns them, with no slice to
		// allocate: the least a handler with these headers costs.
		h := w.Header()
		h["Cache-Control"] = noStore
		h["Content-Type"] = ctText
		h["X-Content-Type-Options"] = nosniff
		_, _ = w.Write(body)
	})
	handlers := []struct {
		name, path string
		h          http.Handler
		spent      time.Duration
	}{
		{"bare", "/", bare, 0},
		{"headers", "/", headers, 0},
		{"text", "/", m.Handler(), 0},
		{"json", "/?format=json", m.Handler(), 0},
	}
	const turn = 1000
	b.ReportAllocs()
	for b.Loop() {
		for i := range handlers {
			h := &handlers[i]
			start := time.Now()
			serveReplayed(b, h.h, "GET "+h.path+" HTTP/1.1\r\nHost: bench\r\n\r\n", turn)
			h.spent += time.Since(start)
		}
	}
	bareSpent := handlers[0].spent
	for _, h := range handlers {
		b.ReportMetric(float64(h.spent)/float64(b.N*turn), h.name+"-ns/req")
		if h.name != "bare" {
			b.ReportMetric(float64(bareSpent)/float64(h.spent), h.name+"-x-bare")
		}
	}
}

// serveReplayed serves n requests req on one connection to h.
func serveReplayed(b *testing.B, h http.Handler, req string, n int) {
	c := &replayConn{req: []byte(req), left: n, closed: make(chan struct{})}
	ln := &oneConnListener{conn: c, done: make(chan struct{})}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(ln) }()
	<-c.closed
	_ = srv.Close()
	if c.answers < n {
		b.Fatalf("%d answers to %d requests", c.answers, n)
	}
}

// replayConn reads as left copies of req, then EOF, and counts the
// answers written to it (each request's answer is flushed in one write).
type replayConn struct {
	req     []byte
	left    int
	pending bytes.Reader
	answers int

	once   sync.Once
	closed chan struct{}
}

func (c *replayConn) Read(p []byte) (int, error) {
	if c.pending.Len() == 0 {
		if c.left == 0 {
			return 0, io.EOF
		}
		c.left--
		c.pending.Reset(c.req)
	}
	return c.pending.Read(p)
}

func (c *replayConn) Write(p []byte) (int, error) {
	c.answers++
	return len(p), nil
}

func (c *replayConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *replayConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *replayConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *replayConn) SetDeadline(time.Time) error      { return nil }
func (c *replayConn) SetReadDeadline(time.Time) error  { return nil }
func (c *replayConn) SetWriteDeadline(time.Time) error { return nil }

// oneConnListener accepts conn once, then blocks until closed.
type oneConnListener struct {
	conn     net.Conn
	accepted bool
	done     chan struct{}
	once     sync.Once
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	if !l.accepted {
		l.accepted = true
		return l.conn, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return &net.TCPAddr{} }
