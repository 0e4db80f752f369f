package sink_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// serve starts srv on a fresh loopback listener and stops it, checking
// that Serve returned nil, when the test ends.
func serve(t *testing.T, srv *sink.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// finish half-closes c and reads until the sink ends the connection,
// returning how many bytes it read.
func finish(t *testing.T, c *net.TCPConn) int64 {
	t.Helper()
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("sink did not end the connection: %v", err)
	}
	return n
}

func TestDiscardCountsExactly(t *testing.T) {
	srv := &sink.Server{}
	addr := serve(t, srv)
	const conns, size = 8, 300_000
	var wg sync.WaitGroup
	for i := range conns {
		c := dial(t, addr)
		wg.Go(func() {
			if i%2 == 0 { // half with a header, half raw
				if err := sink.WriteHeader(c, sink.ModeUpload, 0); err != nil {
					t.Error(err)
					return
				}
			}
			if _, err := c.Write(make([]byte, size)); err != nil {
				t.Error(err)
				return
			}
			if n := finish(t, c); n != 0 {
				t.Errorf("read %d bytes from a discarding sink", n)
			}
		})
	}
	wg.Wait()
	st := srv.Stats()
	if st.BytesIn != conns*size || st.BytesOut != 0 || st.Conns != conns {
		t.Errorf("Stats = %+v, want BytesIn %d, BytesOut 0, Conns %d", st, conns*size, conns)
	}
}

func TestEcho(t *testing.T) {
	for _, tc := range []struct {
		name   string
		echo   bool
		header bool
	}{{"Echo server, raw client", true, false}, {"header on a discarding server", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &sink.Server{Echo: tc.echo}
			c := dial(t, serve(t, srv))
			if tc.header {
				if err := sink.WriteHeader(c, sink.ModeEcho, 0); err != nil {
					t.Fatal(err)
				}
			}
			// "hi" is shorter than the magic: the sink must not
			// wait for more before answering.
			for _, msg := range []string{"hi", "TPS!", "hello, sink"} {
				if _, err := c.Write([]byte(msg)); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(msg))
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, err := io.ReadFull(c, got); err != nil || string(got) != msg {
					t.Fatalf("echo of %q: %q, %v", msg, got, err)
				}
			}
			finish(t, c)
			if st := srv.Stats(); st.BytesIn != 17 || st.BytesOut != 17 {
				t.Errorf("Stats = %+v, want 17 bytes each way", st)
			}
		})
	}
}

func TestDownload(t *testing.T) {
	srv := &sink.Server{}
	addr := serve(t, srv)

	t.Run("greedy", func(t *testing.T) {
		c := dial(t, addr)
		if err := sink.WriteHeader(c, sink.ModeDownload, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, 1<<20)); err != nil {
			t.Fatal(err)
		}
		got := (1 << 20) + finish(t, c)
		if out := srv.Stats().BytesOut; out != got {
			t.Errorf("client read %d bytes, sink counted %d sent", got, out)
		}
	})

	t.Run("paced", func(t *testing.T) {
		before := srv.Stats().BytesOut
		c := dial(t, addr)
		const rate, want = 1 << 20, 300 << 10
		start := time.Now()
		if err := sink.WriteHeader(c, sink.ModeDownload, rate); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, want)); err != nil {
			t.Fatal(err)
		}
		// The sink cannot be early by more than one 20 ms quantum.
		if el, min := time.Since(start), time.Duration(want)*time.Second/rate-25*time.Millisecond; el < min {
			t.Errorf("%d bytes at %d B/s arrived after %v, want at least %v", want, rate, el, min)
		}
		got := want + finish(t, c)
		if out := srv.Stats().BytesOut - before; out != got {
			t.Errorf("client read %d bytes, sink counted %d sent", got, out)
		}
	})
}

// firstWrite is an io.Writer that discards, and closes got at its first
// byte.
type firstWrite struct {
	got  chan struct{}
	once sync.Once
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.once.Do(func() { close(w.got) })
	}
	return len(p), nil
}

func TestBoth(t *testing.T) {
	srv := &sink.Server{}
	c := dial(t, serve(t, srv))
	if err := sink.WriteHeader(c, sink.ModeBoth, 0); err != nil {
		t.Fatal(err)
	}
	var read int64
	done := make(chan struct{})
	sent := &firstWrite{got: make(chan struct{})}
	go func() {
		defer close(done)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		read, _ = io.Copy(sent, c)
	}()
	const size = 2 << 20
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	// The half-close stops the sink's sender: wait until it has sent,
	// or a sink that reads faster than it starts sending sends nothing.
	select {
	case <-sent.got:
	case <-done:
	}
	c.CloseWrite()
	<-done
	if st := srv.Stats(); st.BytesIn != size || st.BytesOut != read || read == 0 {
		t.Errorf("Stats = %+v; client wrote %d, read %d", st, size, read)
	}
}

func TestRawClient(t *testing.T) {
	srv := &sink.Server{}
	addr := serve(t, srv)
	// Starts like the magic, then is not; and one shorter than it.
	for _, data := range []string{"TPSX and more", "TP"} {
		c := dial(t, addr)
		c.Write([]byte(data))
		finish(t, c)
	}
	if st := srv.Stats(); st.BytesIn != 15 {
		t.Errorf("BytesIn = %d, want 15", st.BytesIn)
	}
}

func TestBadHeaderClosed(t *testing.T) {
	srv := &sink.Server{}
	c := dial(t, serve(t, srv))
	c.Write([]byte("TPSK\x09u\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection with version 9 stayed open")
	}
}

func TestServeStopsWithOpenConns(t *testing.T) {
	srv := &sink.Server{Echo: true}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	var conns []*net.TCPConn
	for range 10 {
		c := dial(t, ln.Addr().String())
		// An answered echo proves the connection is being served.
		c.Write([]byte("x"))
		if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// One more downloading, with its sender goroutine busy.
	c := dial(t, ln.Addr().String())
	sink.WriteHeader(c, sink.ModeDownload, 0)
	io.ReadFull(c, make([]byte, 1))
	conns = append(conns, c)
	if st := srv.Stats(); st.Open != 11 {
		t.Fatalf("Open = %d, want 11", st.Open)
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Serve = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if st := srv.Stats(); st.Open != 0 {
		t.Errorf("Open = %d after Serve returned", st.Open)
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.Copy(io.Discard, c); err == nil {
			// EOF is fine too; only a timeout would be wrong.
			continue
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Error("connection left open after Serve returned")
		}
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("listener still accepts after Serve returned")
	}
}

// echoed opens an echo connection to addr and returns it once the sink has
// answered on it, which proves that the sink is serving it.
func echoed(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c := dial(t, addr)
	sink.WriteHeader(c, sink.ModeEcho, 0)
	c.Write([]byte("x"))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExpireEndsOlderConns(t *testing.T) {
	srv := &sink.Server{}
	addr := serve(t, srv)
	old := echoed(t, addr)
	cut := time.Now()
	young := echoed(t, addr)

	srv.Expire(cut, 0)
	old.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, old); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("a connection accepted before the cut is still open")
		}
	}
	young.Write([]byte("y"))
	if _, err := io.ReadFull(young, make([]byte, 1)); err != nil {
		t.Fatalf("a connection accepted after the cut was ended: %v", err)
	}
}

func TestServeReturnsListenerError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := (&sink.Server{}).Serve(context.Background(), ln); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Serve on a closed listener = %v, want net.ErrClosed", err)
	}
}

func TestListenReusePort(t *testing.T) {
	ctx := context.Background()
	ln1, err := sink.ListenReusePort(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln1.Close()
	ln2, err := sink.ListenReusePort(ctx, "tcp", ln1.Addr().String())
	if err != nil {
		t.Fatalf("second listener on %s: %v", ln1.Addr(), err)
	}
	defer ln2.Close()

	srv := &sink.Server{Echo: true}
	sctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, ln := range []net.Listener{ln1, ln2} {
		wg.Go(func() { srv.Serve(sctx, ln) })
	}
	defer func() { cancel(); wg.Wait() }()
	const n = 20
	for range n {
		c := dial(t, ln1.Addr().String())
		c.Write([]byte("x"))
		if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		finish(t, c)
	}
	if st := srv.Stats(); st.Conns != n || st.BytesIn != n {
		t.Errorf("Stats = %+v, want %d conns", st, n)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := sink.WriteHeader(&b, sink.ModeBoth, 123456789); err != nil {
		t.Fatal(err)
	}
	if b.Len() != sink.HeaderSize {
		t.Fatalf("header is %d bytes", b.Len())
	}
	h, err := sink.ParseHeader(b.Bytes())
	if err != nil || h != (sink.Header{Mode: sink.ModeBoth, BytesPerSecond: 123456789}) {
		t.Errorf("ParseHeader = %+v, %v", h, err)
	}
	if err := sink.WriteHeader(&b, sink.Mode('x'), 0); err == nil {
		t.Error("WriteHeader accepted mode 'x'")
	}
}

func FuzzParseHeader(f *testing.F) {
	f.Add([]byte("TPSK\x01d\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00"))
	f.Add([]byte("TPSK\x02u"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := sink.ParseHeader(b)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := sink.WriteHeader(&out, h.Mode, h.BytesPerSecond); err != nil {
			t.Fatalf("parsed header %+v does not encode: %v", h, err)
		}
		if h2, err := sink.ParseHeader(out.Bytes()); err != nil || h2 != h {
			t.Fatalf("round trip %+v -> %+v, %v", h, h2, err)
		}
	})
}

// A small read buffer only takes more reads: every byte is still counted
// and echoed.
func TestSmallReadBuffer(t *testing.T) {
	srv := &sink.Server{Echo: true, ReadBuffer: 3}
	c := dial(t, serve(t, srv))
	msg := "hello, small sink"
	c.Write([]byte(msg))
	got := make([]byte, len(msg))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != msg {
		t.Fatalf("echo of %q: %q, %v", msg, got, err)
	}
	finish(t, c)
	if st := srv.Stats(); st.BytesIn != int64(len(msg)) || st.BytesOut != int64(len(msg)) {
		t.Errorf("Stats = %+v, want %d bytes each way", st, len(msg))
	}
}
