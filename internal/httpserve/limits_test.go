package httpserve_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
)

// hangGuard bounds every wait; it only fires when a test is broken.
const hangGuard = 10 * time.Second

// blocking is a handler whose requests wait until release is closed,
// each one signalling entered first, but for /now, answered at once.
func blocking(entered chan<- string, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/now" {
			io.WriteString(w, r.URL.Path)
			return
		}
		entered <- r.URL.Path
		select {
		case <-release:
		case <-r.Context().Done():
		}
		io.WriteString(w, r.URL.Path)
	})
}

// sendGET writes a request for path on a connection of its own.
func sendGET(t *testing.T, addr, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// holdTwo serves blocking under MaxConnections 2 and holds both slots
// with requests in flight; closing the returned channel answers them, and
// the server closes their connections. refused, when set, is
// Options.Refused.
func holdTwo(t *testing.T, refused func()) (addr string, held [2]net.Conn, release chan struct{}) {
	t.Helper()
	entered, release := make(chan string, 2), make(chan struct{})
	addr = start(t, blocking(entered, release), httpserve.Options{MaxConnections: 2, UnencryptedHTTP2: true, Refused: refused})
	held = [2]net.Conn{sendGET(t, addr, "/a"), sendGET(t, addr, "/b")}
	<-entered
	<-entered
	return addr, held, release
}

// readAnswer reads c's HTTP response to the end, the status and body.
func readAnswer(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(hangGuard))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the answer's body: %v", err)
	}
	return resp, string(body)
}

const refusal = "too many connections: this server serves at most 2 at once\n"

// isRefusal reports whether resp and body are the HTTP/1.1 refusal.
func isRefusal(resp *http.Response, body string) bool {
	return resp.StatusCode == http.StatusServiceUnavailable && resp.Close &&
		resp.Header.Get("Retry-After") == "1" && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") &&
		body == refusal
}

// With MaxConnections, a connection past the bound is answered at once
// with a 503 that says why, while the others are held; once one of them
// is closed, the next connection is served.
func TestMaxConnectionsRefusesHTTP1(t *testing.T) {
	addr, held, release := holdTwo(t, nil)
	resp, body := readAnswer(t, sendGET(t, addr, "/now"))
	if !isRefusal(resp, body) {
		t.Errorf("a third connection past MaxConnections 2: %s %v %q, want the 503 refusal", resp.Status, resp.Header, body)
	}
	close(release)
	for _, c := range held {
		readAnswer(t, c) // to the server's close: its slot is free
	}
	if _, body := readAnswer(t, sendGET(t, addr, "/now")); body != "/now" {
		t.Errorf("once places were free: %q, want /now", body)
	}
}

// An HTTP/2 client without TLS past the bound gets its request refused
// with a 503 that says why, and a GOAWAY.
func TestMaxConnectionsRefusesHTTP2(t *testing.T) {
	addr, _, _ := holdTwo(t, nil)
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	defer h2c.CloseIdleConnections()
	resp, err := (&http.Client{Transport: h2c, Timeout: hangGuard}).Get("http://" + addr + "/now")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || string(body) != refusal {
		t.Errorf("an HTTP/2 connection past MaxConnections 2: %s %s %v %q, want the 503 refusal", resp.Proto, resp.Status, resp.Header, body)
	}

	_, fr := h2Conn(t, addr)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("no GOAWAY before %v", err)
		}
		if ga, isGoAway := f.(*http2.GoAwayFrame); isGoAway {
			if ga.ErrCode != http2.ErrCodeEnhanceYourCalm || string(ga.DebugData())+"\n" != refusal {
				t.Errorf("GOAWAY %v %q, want ENHANCE_YOUR_CALM and the refusal", ga.ErrCode, ga.DebugData())
			}
			return
		}
	}
}

// A client past the bound that sends nothing and never reads does not
// hold up the accept loop: once a place is free, the next connection is
// served; the silent one gets the 503 in the end.
func TestSilentClientPastTheBoundDoesNotStallAccept(t *testing.T) {
	refused := make(chan struct{}, 1)
	addr, held, release := holdTwo(t, func() { refused <- struct{}{} })
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	select {
	case <-refused:
	case <-time.After(hangGuard):
		t.Fatal("the silent connection past MaxConnections 2 was not refused")
	}
	close(release)
	for _, c := range held {
		readAnswer(t, c)
	}
	if _, body := readAnswer(t, sendGET(t, addr, "/now")); body != "/now" {
		t.Errorf("with a silent client being refused: %q, want /now", body)
	}
	if resp, body := readAnswer(t, silent); !isRefusal(resp, body) {
		t.Errorf("the silent client: %s %q, want the 503 refusal", resp.Status, body)
	}
}

// A flood of connections past the bound, none of which sends or reads,
// is refused by a bounded number of goroutines: each gets the 503.
func TestRefusalFloodIsBounded(t *testing.T) {
	const flood = 500
	var mu sync.Mutex
	peak, n := 0, 0
	all := make(chan struct{})
	addr, _, _ := holdTwo(t, func() {
		// Here, in the accept loop, at each refusal: every goroutine
		// the refusals before it started is counted.
		g := runtime.NumGoroutine()
		mu.Lock()
		defer mu.Unlock()
		peak = max(peak, g)
		if n++; n == flood {
			close(all)
		}
	})
	base := runtime.NumGoroutine()
	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	select {
	case <-all:
	case <-time.After(hangGuard):
		t.Fatalf("%d connections past MaxConnections 2 were not refused", flood)
	}
	mu.Lock()
	// A refusal in progress is a goroutine, and 16 at most run at once;
	// the rest is slack for the runtime's own.
	if extra := peak - base; extra > 16+8 {
		t.Errorf("refusing %d connections ran %d goroutines beside the %d served, want at most 24", flood, extra, base)
	}
	mu.Unlock()
	for i, c := range conns {
		if resp, body := readAnswer(t, c); !isRefusal(resp, body) {
			t.Fatalf("flooding connection %d: %s %q, want the 503 refusal", i, resp.Status, body)
		}
	}
}

// h2Conn is a raw HTTP/2 connection with prior knowledge, as gRPC's
// insecure clients open it, and its framer.
func h2Conn(t *testing.T, addr string) (net.Conn, *http2.Framer) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(hangGuard))
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return c, fr
}

// With MaxConcurrentStreams, the server announces the bound in its
// SETTINGS.
func TestMaxConcurrentStreams(t *testing.T) {
	addr := start(t, ok, httpserve.Options{UnencryptedHTTP2: true, MaxConcurrentStreams: 8})
	_, fr := h2Conn(t, addr)
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	settings, isSettings := f.(*http2.SettingsFrame)
	if !isSettings {
		t.Fatalf("the server's first frame is %v, want SETTINGS", f)
	}
	if v, ok := settings.Value(http2.SettingMaxConcurrentStreams); !ok || v != 8 {
		t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS %d (set: %v), want 8", v, ok)
	}
}

// An HTTP/2 client that stops answering is pinged, then dropped, even
// with a stream open (a Watch that would otherwise be held for good).
func TestSilentHTTP2ClientsAreDropped(t *testing.T) {
	entered := make(chan string, 1)
	addr := start(t, blocking(entered, nil), httpserve.Options{
		UnencryptedHTTP2: true, PingInterval: 50 * time.Millisecond, PingTimeout: 50 * time.Millisecond,
	})
	_, fr := h2Conn(t, addr)
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, h := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "x"}, {":path", "/watch"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	<-entered
	pinged := false
	for {
		// Read and never answer: the SETTINGS' ack, and no PING ack.
		f, err := fr.ReadFrame()
		if err != nil {
			if !pinged || errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("pinged %v, then read %v; want a ping, then the server closing a client that does not answer it", pinged, err)
			}
			return
		}
		if p, isPing := f.(*http2.PingFrame); isPing && !p.IsAck() {
			pinged = true
		}
	}
}
