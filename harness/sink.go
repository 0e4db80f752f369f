package harness

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
)

// Sink is a TCP sink: it reads and discards everything, or echoes it back
// when Echo is set, and counts bytes and connections. It serves any
// net.Listener, inside the tunnel or on the host.
type Sink struct {
	// Echo makes the sink write back what it reads.
	Echo bool

	bytesIn, bytesOut, accepted, open atomic.Int64

	mu     sync.Mutex
	lns    []net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// SinkStats are a Sink's counters.
type SinkStats struct {
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
	Accepted int64 `json:"accepted"`
	Open     int64 `json:"open"`
}

// Start serves ln until Close. It may be called for several listeners.
func (s *Sink) Start(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return net.ErrClosed
	}
	s.lns = append(s.lns, ln)
	s.wg.Add(1)
	go s.accept(ln)
	return nil
}

func (s *Sink) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // closed, or a listener that cannot recover
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		if s.conns == nil {
			s.conns = make(map[net.Conn]struct{})
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1) // under mu, so Close's Wait cannot miss it
		s.mu.Unlock()
		s.accepted.Add(1)
		s.open.Add(1)
		go s.serve(c)
	}
}

func (s *Sink) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.open.Add(-1)
	}()
	// 16 KiB per connection: a sink holding 3,000 flows stays under 50 MiB.
	buf := make([]byte, 16<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			s.bytesIn.Add(int64(n))
			if s.Echo {
				w, werr := c.Write(buf[:n])
				s.bytesOut.Add(int64(w))
				if werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// Stats returns the counters.
func (s *Sink) Stats() SinkStats {
	return SinkStats{BytesIn: s.bytesIn.Load(), BytesOut: s.bytesOut.Load(), Accepted: s.accepted.Load(), Open: s.open.Load()}
}

// Close closes the listeners and every connection and waits for the
// sink's goroutines.
func (s *Sink) Close() error {
	s.mu.Lock()
	s.closed = true
	var errs []error
	for _, ln := range s.lns {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return errors.Join(errs...)
}
