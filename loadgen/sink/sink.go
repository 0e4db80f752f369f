package sink

import (
	"bufio"
	"cmp"
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/accept"
	"github.com/tunnelprobe/tunnelprobe/loadgen/internal/pace"
)

// Server is a TCP sink. The zero value discards what it reads; Echo makes
// it write it back. A client's header (see the package documentation)
// overrides either. A Server may serve several listeners at once, with one
// Serve call each, and counts for all of them.
type Server struct {
	// Echo makes connections without a header echo instead of discard.
	Echo bool
	// ReadBuffer is each connection's read buffer in bytes; zero means
	// readBufSize. A sink of thousands of slow connections, as a lab's,
	// can take far less.
	ReadBuffer int

	conns, open, bytesIn, bytesOut atomic.Int64

	// live holds every open connection with the time it was accepted,
	// for Expire.
	liveMu sync.Mutex
	live   map[net.Conn]time.Time
}

// Stats are a Server's counters.
type Stats struct {
	// Conns counts accepted connections; Open those not closed yet.
	Conns int64 `json:"conns"`
	Open  int64 `json:"open"`
	// BytesIn and BytesOut count payload: headers are not counted.
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
}

// Add returns s with o's counters added.
func (s Stats) Add(o Stats) Stats {
	s.Conns += o.Conns
	s.Open += o.Open
	s.BytesIn += o.BytesIn
	s.BytesOut += o.BytesOut
	return s
}

// Stats returns the counters. It is safe to call at any time.
func (s *Server) Stats() Stats {
	return Stats{Conns: s.conns.Load(), Open: s.open.Load(), BytesIn: s.bytesIn.Load(), BytesOut: s.bytesOut.Load()}
}

const (
	// readBufSize is a connection's read buffer: 16 KiB keeps a sink
	// holding 10,000 connections near 160 MiB.
	readBufSize = 16 << 10
	// drainGrace bounds how long a connection the client ended waits for
	// the client to acknowledge what the sink sent, before resetting it:
	// thousands of greedy connections may hold a gigabyte in socket
	// buffers. A client that vanished holds its goroutine that long.
	drainGrace = 10 * time.Second
)

// Serve accepts connections on ln and serves them until ctx ends or ln
// fails. It then closes ln and every connection it accepted (with a reset:
// no TIME_WAIT is left behind), waits for all of their goroutines, and
// returns nil when ctx ended or the listener's error otherwise. Accept
// errors that pass (too many open files, aborted connections) are retried
// after a short back-off.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var (
		mu     sync.Mutex
		conns  = map[net.Conn]struct{}{}
		closed bool
		wg     sync.WaitGroup
	)
	shutdown := func() {
		ln.Close()
		mu.Lock()
		closed = true
		for c := range conns {
			abort(c)
		}
		mu.Unlock()
	}
	// Closing ln is what ends a blocked Accept; closing the connections
	// ends their goroutines' blocked reads and writes.
	stop := context.AfterFunc(ctx, shutdown)
	defer func() {
		stop()
		shutdown()
		wg.Wait()
	}()

	for {
		c, err := accept.Next(ctx, ln)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		mu.Lock()
		if closed {
			mu.Unlock()
			abort(c)
			return nil
		}
		conns[c] = struct{}{}
		// Add under mu, so that the deferred Wait cannot miss it.
		wg.Add(1)
		mu.Unlock()
		s.conns.Add(1)
		s.open.Add(1)
		s.track(c, time.Now())
		// ended may run on a Drainer's goroutine, after this one ended.
		ended := func() {
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
			s.untrack(c)
			s.open.Add(-1)
			wg.Done()
		}
		go s.serveConn(ctx, c, ended)
	}
}

// track and untrack keep live, the open connections for Expire.
func (s *Server) track(c net.Conn, at time.Time) {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	if s.live == nil {
		s.live = map[net.Conn]time.Time{}
	}
	s.live[c] = at
}

func (s *Server) untrack(c net.Conn) {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	delete(s.live, c)
}

// Expire ends every connection accepted before t, grace from now: until
// then it still reads, and counts, what it had received; then it is reset.
// It is for a client that vanished without a word, such as a restarted
// VPN client whose old connections can never end on their own: their
// reader (an upload never sends, so never finds the client gone) would
// otherwise hold its goroutine, buffers and socket for the rest of the
// run, as a server without TCP keepalive does.
func (s *Server) Expire(t time.Time, grace time.Duration) {
	deadline := time.Now().Add(grace)
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	for c, at := range s.live {
		if at.Before(t) {
			// A read that fails ends the connection with a reset, its
			// sender too (serveConn).
			_ = c.SetReadDeadline(deadline)
		}
	}
}

// serveConn runs one connection, closes it and calls ended: at its own
// end, or, for an upload on a Drainer, when the drain ends.
func (s *Server) serveConn(ctx context.Context, c net.Conn, ended func()) {
	br := bufio.NewReaderSize(c, HeaderSize)
	h, ok, err := readHeader(br)
	if err != nil {
		abort(c)
		ended()
		return
	}
	if !ok {
		h.Mode = ModeUpload
		if s.Echo {
			h.Mode = ModeEcho
		}
	}
	if d := asDrainer(c, h); d != nil {
		s.drainUpload(d, br, func(err error) {
			s.closeConn(ctx, c, ok, err)
			ended()
		})
		return
	}
	s.closeConn(ctx, c, ok, s.exchange(c, br, h))
	ended()
}

// exchange carries the connection's payload as h says, until the
// client's end (nil) or an error.
func (s *Server) exchange(c net.Conn, br *bufio.Reader, h Header) (err error) {
	buf := make([]byte, cmp.Or(s.ReadBuffer, readBufSize))
	switch h.Mode {
	case ModeEcho:
		err = s.echo(br, c, buf)
	case ModeDownload, ModeBoth:
		// The client's half-close (EOF) tells the sender to stop.
		// ModeDownload reads too: to notice that end, and because a
		// client may send anyway.
		sendCtx, stopSending := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { s.send(sendCtx, c, h.BytesPerSecond) })
		err = s.discard(br, buf)
		stopSending()
		wg.Wait()
	default:
		err = s.discard(br, buf)
	}
	return err
}

// closeConn ends c after its exchange ended with err; ok says the client
// sent a header.
func (s *Server) closeConn(ctx context.Context, c net.Conn, ok bool, err error) {
	switch {
	case err != nil || ctx.Err() != nil:
		abort(c)
	case !ok:
		// A client without a header gets an ordinary close: it may
		// be waiting for our FIN (curl, nc -N).
		c.Close()
	default:
		// The client ended cleanly and everything it sent has been
		// counted. Reset the connection once the client has
		// acknowledged everything we sent: both sides' counts then
		// agree and neither side keeps a TIME_WAIT entry. Where the
		// send queue cannot be asked about (a netstack connection),
		// an ordinary close delivers what is left.
		if waitDrained(ctx, c, drainGrace) {
			abort(c)
		} else {
			c.Close()
		}
	}
}

// discard reads r to its end, counting bytes. It returns nil at EOF.
func (s *Server) discard(r io.Reader, buf []byte) error {
	for {
		n, err := r.Read(buf)
		s.bytesIn.Add(int64(n))
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// echo writes back what it reads from r to w until r ends.
func (s *Server) echo(r io.Reader, w io.Writer, buf []byte) error {
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.bytesIn.Add(int64(n))
			m, werr := w.Write(buf[:n])
			s.bytesOut.Add(int64(m))
			if werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// send writes to c at bytesPerSecond (0: as fast as c accepts) until ctx
// ends or a write fails.
func (s *Server) send(ctx context.Context, c net.Conn, bytesPerSecond uint64) {
	// A Write blocked on a full window must end with ctx. The deadline
	// only ends the Write; the bytes it did write are counted.
	stop := context.AfterFunc(ctx, func() { _ = c.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	_ = pace.Send(ctx, c, float64(bytesPerSecond), func(n int64) { s.bytesOut.Add(n) })
}

// abort closes c with a reset (SO_LINGER 0) when c is a TCP connection, so
// that no TIME_WAIT entry is left behind.
func abort(c net.Conn) {
	if l, ok := c.(interface{ SetLinger(int) error }); ok {
		_ = l.SetLinger(0)
	}
	_ = c.Close()
}
