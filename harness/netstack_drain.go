package harness

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// listenBacklog is gonet's: the backlog of Linux's somaxconn.
const listenBacklog = 4096

// drainListener is a netstack's TCP listener whose connections are
// sink.Drainers: a lab's sink drains its thousands of slow uploads from
// the stack's notifications instead of a goroutine blocked in Read for
// each, which with its stack and read buffer held 10-16 KB a connection
// (docs/lab.md, "What a connection costs").
type drainListener struct {
	*gonet.TCPListener
	ep tcpip.Endpoint
	wq *waiter.Queue
}

// listenDrainTCP listens on s at fa, as gonet.ListenTCP does.
func listenDrainTCP(s *stack.Stack, fa tcpip.FullAddress, proto tcpip.NetworkProtocolNumber) (*drainListener, error) {
	wq := new(waiter.Queue)
	ep, terr := s.NewEndpoint(tcp.ProtocolNumber, proto, wq)
	if terr != nil {
		return nil, errors.New(terr.String())
	}
	if terr = ep.Bind(fa); terr == nil {
		terr = ep.Listen(listenBacklog)
	}
	if terr != nil {
		ep.Close()
		return nil, &net.OpError{Op: "listen", Net: "tcp", Err: errors.New(terr.String())}
	}
	return &drainListener{TCPListener: gonet.NewTCPListener(s, wq, ep), ep: ep, wq: wq}, nil
}

// Accept waits for a connection, as gonet's does, until the listener is
// closed.
func (l *drainListener) Accept() (net.Conn, error) {
	n, wq, terr := l.ep.Accept(nil)
	if _, ok := terr.(*tcpip.ErrWouldBlock); ok {
		entry, notify := waiter.NewChannelEntry(waiter.ReadableEvents)
		l.wq.EventRegister(&entry)
		defer l.wq.EventUnregister(&entry)
		for {
			if n, wq, terr = l.ep.Accept(nil); !isWouldBlock(terr) {
				break
			}
			<-notify // closing the endpoint notifies too
		}
	}
	if terr != nil {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: errors.New(terr.String())}
	}
	return &drainConn{TCPConn: gonet.NewTCPConn(wq, n), ep: n, wq: wq}, nil
}

func isWouldBlock(err tcpip.Error) bool {
	_, ok := err.(*tcpip.ErrWouldBlock)
	return ok
}

// drainConn is a netstack TCP connection that can be drained (Drain)
// besides being read.
type drainConn struct {
	*gonet.TCPConn
	ep tcpip.Endpoint
	wq *waiter.Queue

	deadline atomic.Pointer[time.Time] // the read deadline, for Drain
	timer    atomic.Pointer[time.Timer]
	// pending counts the notifications not yet drained: the one that
	// makes it 1 starts a drain, which ends when it sees none came
	// during its reads.
	pending           atomic.Int64
	counted           func(int64)
	done              func(error)
	draining, stopped atomic.Bool
	entry             waiter.Entry
}

var _ sink.Drainer = (*drainConn)(nil)

// Drain implements sink.Drainer. Each notification of the stack (data,
// the peer's end, an error; a deadline; Close) starts, unless one runs, a
// goroutine that reads all there is into a counter, without copying, and
// ends: only the connections with something to read hold one.
func (c *drainConn) Drain(counted func(int64), done func(error)) {
	c.counted, c.done = counted, done
	c.entry = waiter.NewFunctionEntry(waiter.ReadableEvents|waiter.EventHUp|waiter.EventErr, func(waiter.EventMask) { c.kick() })
	c.draining.Store(true)
	c.wq.EventRegister(&c.entry)
	c.kick() // what came before
}

// kick starts a drain unless one runs; that one then reads again.
func (c *drainConn) kick() {
	if c.draining.Load() && c.pending.Add(1) == 1 {
		go c.drain()
	}
}

// drain reads what there is until a read would block with no
// notification since it started, or until the connection's end.
func (c *drainConn) drain() {
	for {
		n := c.pending.Load()
		if err := c.readAll(); err != nil {
			c.finish(err)
			return
		}
		if c.pending.CompareAndSwap(n, 0) {
			return
		}
	}
}

// readAll reads until a read would block (nil), the stream's end
// (errDrained), an error or the read deadline.
func (c *drainConn) readAll() error {
	if c.stopped.Load() {
		return nil
	}
	for {
		if d := c.deadline.Load(); d != nil && !d.IsZero() && !time.Now().Before(*d) {
			return os.ErrDeadlineExceeded
		}
		_, terr := c.ep.Read(countWriter(c.counted), tcpip.ReadOptions{})
		switch terr.(type) {
		case nil:
		case *tcpip.ErrWouldBlock:
			return nil
		case *tcpip.ErrClosedForReceive:
			return errDrained
		default:
			return errors.New(terr.String())
		}
	}
}

// errDrained is the end of a drained connection's stream (done(nil)).
var errDrained = errors.New("drained to the end")

// finish ends the drain once: done learns why.
func (c *drainConn) finish(err error) {
	if !c.stopped.CompareAndSwap(false, true) {
		return
	}
	c.draining.Store(false)
	c.wq.EventUnregister(&c.entry)
	if t := c.timer.Load(); t != nil {
		t.Stop()
	}
	if errors.Is(err, errDrained) {
		err = nil
	}
	c.done(err)
}

// countWriter discards what it is given, counting it.
type countWriter func(int64)

func (w countWriter) Write(p []byte) (int, error) {
	w(int64(len(p)))
	return len(p), nil
}

// SetReadDeadline also bounds Drain: once it passes, done gets
// os.ErrDeadlineExceeded.
func (c *drainConn) SetReadDeadline(t time.Time) error {
	c.deadline.Store(&t)
	if old := c.timer.Swap(nil); old != nil {
		old.Stop()
	}
	if !t.IsZero() {
		c.timer.Store(time.AfterFunc(time.Until(t), c.kick))
	}
	return c.TCPConn.SetReadDeadline(t)
}

// SetDeadline sets both deadlines, as SetReadDeadline and
// SetWriteDeadline do.
func (c *drainConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.TCPConn.SetWriteDeadline(t)
}

// Close closes the connection and, if it is drained, ends the drain.
func (c *drainConn) Close() error {
	err := c.TCPConn.Close()
	c.kick()
	return err
}
