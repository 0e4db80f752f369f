package loadgen

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen/internal/pace"
)

const (
	// readBufSize is a reading connection's buffer: 16 KiB keeps 10,000
	// downloading connections near 160 MiB.
	readBufSize = 16 << 10
	// stopGrace bounds the end-of-run handshake of each connection (see
	// finish): thousands of greedy connections may hold a gigabyte in
	// socket buffers, which takes seconds to read. interruptGrace
	// replaces it when ctx ended the run, which must then stop within
	// 2 s.
	stopGrace      = 5 * time.Second
	interruptGrace = 250 * time.Millisecond
)

var (
	// past is a deadline that has passed: setting it ends blocked I/O.
	past = time.Unix(1, 0)
	// errStopped ends a connection's loops when its context ends.
	errStopped = errors.New("connection stopped")
)

// firstDialEnded takes the outcome of a slot's first dial, which the ramp
// started on a dialer, and goes on with the slot (see slot) in wg: with
// its connection, at once or, in a greedy ramp as fast as possible, once
// the gate opens; after a failed dial, to dial again unless NoReconnect
// is set. It calls attempted, and release once the slot has its first
// connection or ended without one.
func (r *run) firstDialEnded(ctx context.Context, wg *sync.WaitGroup, d dialed, attempted, release func()) {
	conn, err := r.dialedConn(ctx, d)
	if err == nil {
		// Counted open before the ramp may end on attempted: the run's
		// final reading must include this connection.
		r.c.open.Add(1)
		release()
	}
	attempted()
	if err == nil {
		start := func() { wg.Go(func() { r.slot(ctx, conn, nil) }) }
		if r.cfg.dialInterval() > 0 {
			// At a rate the gate opens and shuts as the ramp keeps up
			// or falls behind: the flow starts now and parks there.
			// Flows held and started together at every opening
			// burst onto the target, whose accept queue then
			// overflowed (a sink at 12,000 connects/s: 256 SYNs
			// dropped, 1 s each, in three runs of three).
			start()
			return
		}
		// As fast as possible, the gate is shut until the last first
		// dial ends (or waitLastDials gives up on it, or the ramp
		// ends): the flow's goroutine waits for it unmade.
		r.gate.whenOpen(start)
		return
	}
	if ctx.Err() != nil {
		release() // a dial cut short by the run's end is no failure
		return
	}
	r.c.dialFailed(err)
	if r.cfg.NoReconnect {
		release()
		return
	}
	wg.Go(func() { r.slot(ctx, nil, release) })
}

// slot keeps one of the run's connections open until ctx ends: it carries
// traffic on conn, and redials after a break or a failed dial (conn nil:
// the first dial failed) unless NoReconnect is set. release, when not nil,
// is called once: when a dial opens a connection, or when the slot ends
// without one.
func (r *run) slot(ctx context.Context, conn net.Conn, release func()) {
	releaseOnce := func() {
		if release != nil {
			release()
			release = nil
		}
	}
	defer releaseOnce()
	var b backoff
	for {
		if conn == nil {
			if !b.wait(ctx) {
				return
			}
			var err error
			if conn, err = r.dial(ctx); err != nil {
				if ctx.Err() != nil {
					return // a dial cut short by the run's end is no failure
				}
				r.c.dialFailed(err)
				if r.cfg.NoReconnect {
					return
				}
				continue
			}
			r.c.open.Add(1)
			releaseOnce()
		}
		began := time.Now()
		err := r.hold(ctx, conn)
		conn = nil
		if err == nil {
			return // the run ended
		}
		r.c.broken(err)
		if r.cfg.NoReconnect {
			return
		}
		if time.Since(began) >= maxBackoff {
			// It held for a while: this is a new break, not the
			// same one again.
			b.reset()
		}
	}
}

// dial opens a connection on one of the run's dialers.
func (r *run) dial(ctx context.Context) (net.Conn, error) {
	return r.dialedConn(ctx, r.dialers.dial(ctx))
}

// dialedConn returns d's connection, counting its latency, or why there is
// none; a connection that opened after ctx ended is closed.
func (r *run) dialedConn(ctx context.Context, d dialed) (net.Conn, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.conn == nil {
		return nil, errors.New("dialer returned neither a connection nor an error")
	}
	if ctx.Err() != nil {
		abort(d.conn)
		return nil, ctx.Err()
	}
	r.c.connected(d.latency)
	return d.conn, nil
}

// hold carries traffic on conn, which the caller has counted open, until
// ctx ends, then ends the connection cleanly and returns nil; or until conn
// breaks, and returns why. Either way conn is closed and counted closed on
// return.
//
// Up runs the writer here; Down the reader; Both the writer here and the
// reader in a goroutine of its own, which hold waits for.
func (r *run) hold(ctx context.Context, conn net.Conn) error {
	defer r.c.open.Add(-1) // counted open by firstDialEnded or slot

	// connCtx ends with the run or when the reader breaks; either ends a
	// Write blocked on a full window at once. Bytes it did write are
	// still returned by Write, and counted.
	connCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWrites := context.AfterFunc(connCtx, func() { _ = conn.SetWriteDeadline(past) })
	defer stopWrites()

	// A greedy flow starts behind the ramp's gate too: its header wakes
	// the sink's side of the flow, work that would otherwise take the
	// machine from the dials of a ramp that is behind.
	if _, err := r.flowWriter(connCtx, conn).Write(r.header); err != nil {
		abort(conn)
		if ctx.Err() != nil {
			return nil
		}
		return err
	}

	switch r.cfg.Direction {
	case Down:
		// The reader is this goroutine: the run's end must start the
		// handshake from outside.
		stopReads := context.AfterFunc(ctx, func() { r.finish(conn) })
		defer stopReads()
		err := r.read(conn, make([]byte, readBufSize))
		abort(conn)
		if ctx.Err() != nil {
			return nil
		}
		return err

	case Both:
		var (
			wg   sync.WaitGroup
			rerr error
		)
		wg.Go(func() {
			rerr = r.read(conn, make([]byte, readBufSize))
			if ctx.Err() == nil {
				cancel() // broken: stop the writer
			}
		})
		werr := r.write(connCtx, conn)
		if ctx.Err() != nil {
			r.finish(conn)
			wg.Wait()
			abort(conn)
			return nil
		}
		abort(conn) // ends the reader if the writer broke
		wg.Wait()
		if errors.Is(werr, errStopped) || werr == nil {
			return rerr // the reader broke first
		}
		return werr

	default: // Up
		werr := r.write(connCtx, conn)
		if ctx.Err() != nil {
			r.finish(conn)
			// The sink sends nothing in upload mode: this read
			// only waits for its reset (or our deadline).
			_ = r.read(conn, make([]byte, 512))
			abort(conn)
			return nil
		}
		abort(conn)
		return werr
	}
}

// write sends payload on conn until ctx ends (errStopped) or a write
// fails, at the run's per-connection rate or greedily.
//
// A paced writer follows an open-model schedule that starts when the
// connection opens: when it wakes late or a write blocks, it owes what
// fell due meanwhile and sends it as fast as the path takes it, so a slow
// path gets the offered load, not a politely reduced one.
func (r *run) write(ctx context.Context, conn net.Conn) error {
	err := pace.Send(ctx, r.flowWriter(ctx, conn), r.cfg.connBytesPerSecond(), func(n int64) { r.c.bytesUp.Add(n) })
	if ctx.Err() != nil {
		return errStopped
	}
	return err
}

// flowWriter is conn for a paced flow, and conn behind the ramp's gate for
// a greedy one (see rampGate).
func (r *run) flowWriter(ctx context.Context, conn net.Conn) io.Writer {
	if r.cfg.Rate == 0 {
		return gatedWriter{ctx, &r.gate, conn}
	}
	return conn
}

// read reads conn to its end, counting bytes, and returns the error that
// ended it (io.EOF included). Each read waits at the ramp's gate first:
// a greedy sink sends only as fast as we read. The gate is open for good
// before the run's end, so the end-of-run handshake is never held there.
func (r *run) read(conn net.Conn, buf []byte) error {
	for {
		r.gate.wait(context.Background())
		n, err := conn.Read(buf)
		r.c.bytesDown.Add(int64(n))
		if err != nil {
			return err
		}
	}
}

// finish starts a connection's end-of-run handshake (see package sink):
// the half-close tells the sink that everything has been sent; the sink
// reads it all, stops sending, and resets the connection once we have
// acknowledged what it sent. Reading until that reset makes both sides'
// byte counts agree exactly, and leaves no TIME_WAIT entry on either side.
// The read deadline (r.grace) bounds the wait for a slow path; a
// connection that cannot half-close is ended at once.
func (r *run) finish(conn net.Conn) {
	cw, ok := conn.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		_ = conn.SetReadDeadline(past)
		return
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Duration(r.grace.Load())))
}

// abort closes conn with a reset (SO_LINGER 0) when it is a TCP
// connection, so that repeated runs do not pile up TIME_WAIT entries.
func abort(conn net.Conn) {
	if l, ok := conn.(interface{ SetLinger(int) error }); ok {
		_ = l.SetLinger(0)
	}
	_ = conn.Close()
}
