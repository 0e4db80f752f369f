package httpserve_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
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

// With MaxConnections, a connection past the bound is not served while
// the others are held, and is served once one of them closes.
func TestMaxConnections(t *testing.T) {
	entered, release := make(chan string, 2), make(chan struct{})
	addr := start(t, blocking(entered, release), httpserve.Options{MaxConnections: 2})
	sendGET(t, addr, "/a")
	sendGET(t, addr, "/b")
	<-entered
	<-entered
	third := sendGET(t, addr, "/now")
	// The bound holds /now in the accept queue: nothing answers it. (A
	// server without the bound answers at once; a slow one could pass
	// this wrongly, but the bound never fails it.)
	_ = third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var ne net.Error
	if _, err := third.Read(make([]byte, 1)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a third connection past MaxConnections 2 was served: read %v", err)
	}
	close(release) // /a and /b answer and close: /now gets a place
	_ = third.SetReadDeadline(time.Now().Add(hangGuard))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil {
		t.Fatalf("the waiting connection once places were free: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "/now" {
		t.Errorf("the waiting connection got %q, want /now", body)
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
