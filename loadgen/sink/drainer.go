package sink

import (
	"bufio"
	"net"
)

// Drainer is a connection that can discard what it receives without a
// goroutine blocked in Read for it, as a netstack's connection that its
// stack notifies can. A Server drains an upload on one so: a sink of
// thousands of slow uploads (a lab's) then holds no goroutine, stack or
// read buffer for each connection waiting for its next segment.
type Drainer interface {
	net.Conn
	// Drain discards what arrives from now on, passing each read's byte
	// count to counted, until the stream ends (done(nil)) or a read
	// fails, its read deadline or Close included (done with the error).
	// done is called once, and counted never after it; both may be
	// called from any goroutine, and neither may block for long.
	Drain(counted func(n int64), done func(err error))
}

// drainUpload drains an upload on c, a Drainer, after the bytes br
// buffered, and calls ended with what the read loop would have returned.
func (s *Server) drainUpload(d Drainer, br *bufio.Reader, ended func(error)) {
	n, _ := br.Discard(br.Buffered())
	s.bytesIn.Add(int64(n))
	d.Drain(func(n int64) { s.bytesIn.Add(n) }, ended)
}

// asDrainer is c as a Drainer, for an upload; nil otherwise.
func asDrainer(c net.Conn, h Header) Drainer {
	if d, ok := c.(Drainer); ok && h.Mode == ModeUpload {
		return d
	}
	return nil
}
