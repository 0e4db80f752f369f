package httpserve_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start serves h on loopback until the test ends and returns the address.
func start(t *testing.T, h http.Handler, opts httpserve.Options) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- httpserve.Serve(ctx, ln, h, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

func TestIdleConnectionsAreClosed(t *testing.T) {
	addr := start(t, ok, httpserve.Options{IdleTimeout: 50 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// Kept alive, then idle: the server closes it.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("an idle kept-alive connection: read %v, want EOF from the server's close", err)
	}
}

func TestShutdownCancelsRequestsInFlight(t *testing.T) {
	entered := make(chan struct{})
	wait := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done() // a long poll
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- httpserve.Serve(ctx, ln, wait, httpserve.Options{}) }()
	got := make(chan int, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String())
		if err != nil {
			got <- 0
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	<-entered
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if code := <-got; code != http.StatusServiceUnavailable {
		t.Errorf("the request in flight got %d, want its handler's 503", code)
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestServeReturnsAcceptErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := httpserve.Serve(context.Background(), ln, ok, httpserve.Options{}); err == nil {
		t.Error("Serve on a closed listener returned nil")
	}
}

// One endpoint that fails stops the other, and its error is named; an
// address that cannot be listened on serves nothing.
func TestServeAll(t *testing.T) {
	boom := errors.New("boom")
	stopped := make(chan struct{})
	listening := map[string]net.Addr{}
	err := httpserve.ServeAll(context.Background(), []httpserve.Endpoint{
		{Name: "health", Addr: "127.0.0.1:0", Serve: func(ctx context.Context, ln net.Listener) error {
			defer close(stopped)
			return httpserve.Serve(ctx, ln, http.NotFoundHandler(), httpserve.Options{})
		}},
		{Name: "control", Addr: "127.0.0.1:0", Serve: func(_ context.Context, ln net.Listener) error {
			ln.Close()
			return boom
		}},
	}, func(name string, addr net.Addr) { listening[name] = addr })
	if err != boom {
		t.Errorf("err = %v, want boom", err)
	}
	<-stopped
	if len(listening) != 2 {
		t.Errorf("listening on %v, want both", listening)
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	served := false
	err = httpserve.ServeAll(context.Background(), []httpserve.Endpoint{
		{Name: "health", Addr: "127.0.0.1:0", Serve: func(context.Context, net.Listener) error { served = true; return nil }},
		{Name: "control", Addr: taken.Addr().String()},
	}, func(string, net.Addr) {})
	if err == nil || !strings.HasPrefix(err.Error(), "control: ") || served {
		t.Errorf("err = %v, served %v; want control's listen error and nothing served", err, served)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := httpserve.ServeAll(ctx, nil, nil); err != nil {
		t.Errorf("no endpoint, ctx ended: %v", err)
	}
}

// With UnencryptedHTTP2, a client with prior knowledge speaks HTTP/2 without
// TLS, as gRPC's insecure clients do; HTTP/1.1 is served as before. Without
// it, such a client gets no HTTP/2.
func TestUnencryptedHTTP2(t *testing.T) {
	proto := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	defer h2c.CloseIdleConnections()
	get := func(rt http.RoundTripper, addr string) string {
		t.Helper()
		resp, err := (&http.Client{Transport: rt}).Get("http://" + addr)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	both := start(t, proto, httpserve.Options{UnencryptedHTTP2: true})
	h1 := &http.Transport{}
	defer h1.CloseIdleConnections()
	if got := get(h2c, both); got != "HTTP/2.0" {
		t.Errorf("prior knowledge: %q, want HTTP/2.0", got)
	}
	if got := get(h1, both); got != "HTTP/1.1" {
		t.Errorf("HTTP/1.1 client: %q, want HTTP/1.1", got)
	}
	if got := get(h2c, start(t, proto, httpserve.Options{})); got == "HTTP/2.0" {
		t.Error("HTTP/2 without TLS served without UnencryptedHTTP2")
	}
}
