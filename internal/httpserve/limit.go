package httpserve

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// How a connection past MaxConnections is refused (see limitListener).
const (
	// maxRefusing bounds the refusals in progress, each a goroutine.
	maxRefusing = 16
	// sniffTimeout is how long a refusal waits for the client's first
	// bytes, to tell HTTP/2 from HTTP/1; refuseTimeout, how long it lasts
	// in all.
	sniffTimeout  = 500 * time.Millisecond
	refuseTimeout = time.Second
	// writeTimeout bounds the one write that refuses a connection in the
	// accept loop itself, when maxRefusing are in progress (a fresh
	// connection's empty send buffer takes it at once), and a refusal's
	// writes past refuseTimeout (the GOAWAY after waiting for a request).
	writeTimeout = 100 * time.Millisecond
	// lingerBytes is as much as a refusal reads of the client's request
	// after its answer, so that closing does not reset the connection
	// before the client has read it.
	lingerBytes = 64 << 10
)

// limitListener bounds the connections served at once, as
// netutil.LimitListener does (a slot frees when its connection closes),
// but keeps accepting past the bound and answers each surplus connection
// at once with a refusal, then closes it, where LimitListener would leave
// it in the kernel's accept queue until its client gave up.
//
// A refusal cannot know what its client speaks before reading, and must
// not hold up the accept loop while it reads: it runs in a goroutine of
// its own, at most maxRefusing at once, and lasts refuseTimeout at most. It
// reads the client's first bytes: an HTTP/2 client preface (gRPC without
// TLS) gets the server's SETTINGS, then its first request a response
// refusing it (a gRPC status UNAVAILABLE for a gRPC call, a 503 for any
// other) and a GOAWAY, ENHANCE_YOUR_CALM with the message as debug data;
// anything else, or nothing within sniffTimeout (a plain TCP client), gets
// an HTTP/1.1 503. When maxRefusing refusals are in progress, the accept
// loop writes the 503 itself, with a deadline, and closes the connection
// without reading from it.
type limitListener struct {
	net.Listener
	slots    chan struct{} // a token for each connection served
	refusing chan struct{} // a token for each refusal in progress
	refused  func()        // Options.Refused, or nil
	msg      string
	http1    string // the HTTP/1.1 answer, msg its body

	// wg counts the refusals' goroutines: Accept adds, and wait, once
	// nothing calls Accept any more, waits for them.
	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
	// answering are the connections being refused, which Close closes to
	// end their refusals at once.
	answering map[net.Conn]struct{}
}

func newLimitListener(ln net.Listener, n int, refused func()) *limitListener {
	msg := fmt.Sprintf("too many connections: this server serves at most %d at once", n)
	body := msg + "\n"
	return &limitListener{
		Listener: ln,
		slots:    make(chan struct{}, n),
		refusing: make(chan struct{}, maxRefusing),
		refused:  refused,
		msg:      msg,
		http1: "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n" +
			"Content-Type: text/plain; charset=utf-8\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body,
		answering: make(map[net.Conn]struct{}),
	}
}

// Accept returns the next connection while the bound has room, refusing
// every one past it in the meantime.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
		}
		if l.refused != nil {
			l.refused()
		}
		l.refuse(c)
	}
}

// refuse starts c's refusal, or refuses it at once when maxRefusing are in
// progress.
func (l *limitListener) refuse(c net.Conn) {
	select {
	case l.refusing <- struct{}{}:
	default:
		_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, _ = io.WriteString(c, l.http1)
		c.Close()
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.refusing
		c.Close()
		return
	}
	l.answering[c] = struct{}{}
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		l.answer(c)
		l.mu.Lock()
		delete(l.answering, c)
		l.mu.Unlock()
		c.Close()
		<-l.refusing
	}()
}

// Close closes the listener and cuts the refusals in progress short.
func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for c := range l.answering {
		c.Close() // its refusal's read or write fails and it returns
	}
	return err
}

// wait returns once every refusal has ended. Call it once Accept is no
// longer called.
func (l *limitListener) wait() { l.wg.Wait() }

// answer writes c's refusal in the protocol its client speaks, then waits
// for the client to close, reading what it sent, so that closing c does
// not reset the connection before the client has read the answer.
func (l *limitListener) answer(c net.Conn) {
	start := time.Now()
	_ = c.SetWriteDeadline(start.Add(refuseTimeout + writeTimeout))
	_ = c.SetReadDeadline(start.Add(sniffTimeout))
	h2 := sniffHTTP2(c)
	_ = c.SetReadDeadline(start.Add(refuseTimeout))
	if h2 {
		l.goAway(c)
	} else if _, err := io.WriteString(c, l.http1); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, lingerBytes))
}

// sniffHTTP2 reads c's first bytes and reports whether they are the
// HTTP/2 client preface; it reads no byte past it, which the framer reads
// next.
func sniffHTTP2(c net.Conn) bool {
	var buf [len(http2.ClientPreface)]byte
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		n += m
		if !strings.HasPrefix(http2.ClientPreface, string(buf[:n])) {
			return false
		}
		if err != nil && n < len(buf) {
			return false
		}
	}
	return true
}

// goAway refuses an HTTP/2 connection whose preface has been read: the
// server's SETTINGS, a refusal of its first request if one comes in time,
// and a GOAWAY saying why.
func (l *limitListener) goAway(c net.Conn) {
	fr := http2.NewFramer(c, c)
	fr.SetMaxReadFrameSize(16 << 10) // the protocol's default: the SETTINGS announce no more
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.MaxHeaderListSize = 16 << 10
	var last uint32
	if fr.WriteSettings() == nil {
		last = l.refuseStream(fr)
	}
	_ = fr.WriteGoAway(last, http2.ErrCodeEnhanceYourCalm, []byte(l.msg))
}

// refuseStream reads frames until the client's first request, answers it
// with the refusal and returns its stream, or 0 when none came (or the
// answer could not be written). A gRPC call gets a gRPC status,
// UNAVAILABLE with the message, which gRPC clients report as it is; any
// other request a 503.
func (l *limitListener) refuseStream(fr *http2.Framer) uint32 {
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return 0
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && fr.WriteSettingsAck() != nil {
				return 0
			}
		case *http2.MetaHeadersFrame:
			if l.writeRefusal(fr, f) != nil {
				return 0
			}
			return f.StreamID
		}
	}
}

func (l *limitListener) writeRefusal(fr *http2.Framer, req *http2.MetaHeadersFrame) error {
	grpc := false
	for _, h := range req.RegularFields() {
		if h.Name == "content-type" && strings.HasPrefix(h.Value, "application/grpc") {
			grpc = true
		}
	}
	fields := [][2]string{{":status", "503"}, {"content-type", "text/plain; charset=utf-8"}, {"retry-after", "1"}}
	if grpc {
		// A trailers-only response: the status in the headers. The
		// message is printable ASCII without "%": no percent-encoding.
		fields = [][2]string{{":status", "200"}, {"content-type", "application/grpc"}, {"grpc-status", "14"}, {"grpc-message", l.msg}}
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, h := range fields {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: req.StreamID, BlockFragment: block.Bytes(), EndHeaders: true, EndStream: grpc}); err != nil || grpc {
		return err
	}
	return fr.WriteData(req.StreamID, true, []byte(l.msg+"\n"))
}

// limitConn is a connection served within the bound: closing it frees its
// slot, once. The slot frees first, so that a client that has seen the
// server close a connection finds a slot free for its next.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
