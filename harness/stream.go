package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// StreamPort is the client's in-tunnel UDP port a server stream is sent
// to; nothing listens there: the client's netstack counts the datagrams and
// drops them.
const StreamPort = 5004

// streamDatagram is a stream datagram's payload: a video stream's size.
const streamDatagram = 1200

// Stream sends a one-way UDP stream of rate bits per second from the
// server peer into the tunnel, to the client's StreamPort, until ctx ends,
// whether or not anything comes back: the traffic of a video stream or a
// QUIC server sending until its idle timeout, which a tunnel receives even
// when its uplink is dead. It returns nil when ctx ends.
func (s *Server) Stream(ctx context.Context, rate Rate) error {
	if s.peer == nil {
		return errors.New("harness: stream from a server that is not started")
	}
	if rate <= 0 {
		return fmt.Errorf("harness: stream rate %v: must be positive", rate)
	}
	conn, err := s.peer.tun.DialContext(ctx, "udp", netip.AddrPortFrom(s.cfg.ClientAddr, StreamPort).String())
	if err != nil {
		if ctx.Err() != nil {
			return nil // ended before it began, which is no failure
		}
		return fmt.Errorf("harness: stream: %w", err)
	}
	return stream(ctx, conn, rate)
}

// stream sends the stream of Stream on conn until ctx ends, then closes
// conn.
func stream(ctx context.Context, conn net.Conn, rate Rate) error {
	defer conn.Close()
	// A write blocked on a full stack must not outlive ctx.
	defer context.AfterFunc(ctx, func() { conn.Close() })()
	gap := time.Duration(float64(streamDatagram*8) / float64(rate) * float64(time.Second))
	tick := time.NewTicker(max(gap, time.Millisecond))
	defer tick.Stop()
	// Each tick sends what the rate allows since the last, so a ticker
	// coarser than the gap keeps the rate.
	payload := make([]byte, streamDatagram)
	last := time.Now()
	var owed float64
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-tick.C:
			owed += float64(now.Sub(last)) / float64(gap)
			last = now
			for ; owed >= 1; owed-- {
				// A full queue or a closed device drops the datagram, as
				// a real stream's sender does not notice.
				_, _ = conn.Write(payload)
			}
		}
	}
}
