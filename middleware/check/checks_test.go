package check_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/tunnelprobe/tunnelprobe/internal/testcert"
	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// checkSafety bounds every wait of these tests. It only turns a hang into a
// failure; no test relies on it to synchronise.
const checkSafety = 5 * time.Second

func checkCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), checkSafety)
	t.Cleanup(cancel)
	return ctx
}

// listenTCP returns a TCP listener on 127.0.0.1, closed when the test ends.
func listenTCP(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// redirectDialer returns a DialerFunc that dials target whatever address it is
// asked for, and counts its dials. Checks given an unresolvable host such as
// "tunnel.test" can only pass through it.
func redirectDialer(target string) (check.DialerFunc, *atomic.Int32) {
	var n atomic.Int32
	var d net.Dialer
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		n.Add(1)
		return d.DialContext(ctx, network, target)
	}, &n
}

// recvOrFail receives from ch, failingCheck the test after the checkSafety timeout.
func recvOrFail[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(checkSafety):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// serveTLS completes TLS handshakes with cfg on 127.0.0.1, one connection at
// a time, until the test ends; it returns the address.
func serveTLS(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln := listenTCP(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = conn.SetDeadline(time.Now().Add(checkSafety))
			tc := tls.Server(conn, cfg)
			_ = tc.Handshake()
			tc.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

// recordSNI makes cfg send the SNI of each ClientHello on the returned
// channel (the first one only; later ones are dropped).
func recordSNI(cfg *tls.Config) <-chan string {
	ch := make(chan string, 1)
	cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		select {
		case ch <- hello.ServerName:
		default:
		}
		return nil, nil
	}
	return ch
}

func TestTCPCheck(t *testing.T) {
	t.Run("pass", func(t *testing.T) {
		ln := listenTCP(t)
		if err := (check.TCP{Address: ln.Addr().String()}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		addr := testnet.RefusedAddr(t)
		err := check.TCP{Address: addr}.Check(checkCtx(t))
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("err = %v, want connection refused", err)
		}
		if want := "tcp " + addr + ": dial: connection refused"; err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
	})
	t.Run("dialer", func(t *testing.T) {
		ln := listenTCP(t)
		d, dials := redirectDialer(ln.Addr().String())
		if err := (check.TCP{Address: "tunnel.test", Dialer: d}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
		if dials.Load() != 1 {
			t.Errorf("dials = %d, want 1", dials.Load())
		}
	})
}

func TestTLSCheck(t *testing.T) {
	bundle := testcert.Must(t, "probe.test", "127.0.0.1")

	t.Run("pass", func(t *testing.T) {
		cfg := bundle.ServerConfig()
		sni := recordSNI(cfg)
		addr := serveTLS(t, cfg)
		if err := (check.TLS{Address: addr, RootCAs: bundle.Pool}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
		// An IP literal is verified against the certificate's IPs and
		// sends no SNI.
		if got := recvOrFail(t, sni, "ClientHello"); got != "" {
			t.Errorf("SNI = %q, want none for an IP address", got)
		}
	})
	t.Run("SNI is the host", func(t *testing.T) {
		cfg := bundle.ServerConfig()
		sni := recordSNI(cfg)
		addr := serveTLS(t, cfg)
		_, port, _ := net.SplitHostPort(addr)
		d, dials := redirectDialer(addr)
		c := check.TLS{Address: "probe.test:" + port, RootCAs: bundle.Pool, Dialer: d}
		if err := c.Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
		if got := recvOrFail(t, sni, "ClientHello"); got != "probe.test" {
			t.Errorf("SNI = %q, want probe.test", got)
		}
		if dials.Load() != 1 {
			t.Errorf("dials = %d, want 1", dials.Load())
		}
	})
	t.Run("ServerName overrides the host", func(t *testing.T) {
		cfg := bundle.ServerConfig()
		sni := recordSNI(cfg)
		addr := serveTLS(t, cfg)
		c := check.TLS{Address: addr, ServerName: "probe.test", RootCAs: bundle.Pool}
		if err := c.Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
		if got := recvOrFail(t, sni, "ClientHello"); got != "probe.test" {
			t.Errorf("SNI = %q, want probe.test", got)
		}
	})
	t.Run("wrong CA", func(t *testing.T) {
		addr := serveTLS(t, bundle.ServerConfig())
		other := testcert.Must(t)
		err := check.TLS{Address: addr, RootCAs: other.Pool}.Check(checkCtx(t))
		if !errors.As(err, new(x509.UnknownAuthorityError)) {
			t.Fatalf("err = %v, want unknown authority", err)
		}
		if prefix := "tls " + addr + ": handshake: "; !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("err = %q, want prefix %q", err, prefix)
		}
	})
	t.Run("InsecureSkipVerify", func(t *testing.T) {
		addr := serveTLS(t, testcert.Must(t, "elsewhere.test").ServerConfig())
		if err := (check.TLS{Address: addr, InsecureSkipVerify: true}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("TLS 1.1 rejected", func(t *testing.T) {
		cfg := bundle.ServerConfig()
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
		addr := serveTLS(t, cfg)
		err := check.TLS{Address: addr, RootCAs: bundle.Pool}.Check(checkCtx(t))
		if err == nil || !strings.Contains(err.Error(), "protocol version") {
			t.Fatalf("err = %v, want a protocol version failure", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		addr := testnet.RefusedAddr(t)
		err := check.TLS{Address: addr, RootCAs: bundle.Pool}.Check(checkCtx(t))
		if want := "tls " + addr + ": dial: connection refused"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
	})
}

// silentServer accepts one TCP connection and never answers. It reports on
// hello once the first bytes (the ClientHello) arrive, and on closed once a
// read fails because the client closed the connection.
func silentServer(t *testing.T) (addr string, hello <-chan struct{}, closed <-chan error) {
	t.Helper()
	ln := listenTCP(t)
	helloC := make(chan struct{}, 1)
	closedC := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			closedC <- err
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(checkSafety))
		buf := make([]byte, 4096)
		if _, err := conn.Read(buf); err != nil {
			closedC <- err
			return
		}
		helloC <- struct{}{}
		_, err = io.Copy(io.Discard, conn)
		if err == nil {
			err = io.EOF
		}
		closedC <- err
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), helloC, closedC
}

// checkClosedByClient fails unless the server saw the client close: EOF or a
// reset, not the server's own checkSafety deadline.
func checkClosedByClient(t *testing.T, closed <-chan error) {
	t.Helper()
	err := recvOrFail(t, closed, "the server to see the connection closed")
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("server read: %v; the client never closed the connection", err)
	}
}

func TestTLSCheckSilentServer(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		addr, _, closed := silentServer(t)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		err := check.TLS{Address: addr, InsecureSkipVerify: true}.Check(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		checkClosedByClient(t, closed)
	})
	t.Run("cancel mid-handshake", func(t *testing.T) {
		addr, hello, closed := silentServer(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		result := make(chan error, 1)
		go func() { result <- check.TLS{Address: addr, InsecureSkipVerify: true}.Check(ctx) }()
		recvOrFail(t, hello, "the ClientHello")
		cancel()
		checkClosedByClient(t, closed)
		if err := recvOrFail(t, result, "the check"); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("cancel mid-dial", func(t *testing.T) {
		// A Dialer that ignores ctx hands back a connection after the
		// cancellation; the check must close it rather than use it.
		addr, _, closed := silentServer(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var d net.Dialer
		dialer := check.DialerFunc(func(_ context.Context, network, address string) (net.Conn, error) {
			conn, err := d.DialContext(t.Context(), network, address)
			cancel()
			return conn, err
		})
		err := check.TLS{Address: addr, InsecureSkipVerify: true, Dialer: dialer}.Check(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		checkClosedByClient(t, closed)
	})
}

func TestHTTPCheck(t *testing.T) {
	var targetHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusFound)
	})
	mux.HandleFunc("/target", func(w http.ResponseWriter, r *http.Request) { targetHits.Add(1) })
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(make([]byte, 1<<20))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(checkSafety):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	t.Run("200", func(t *testing.T) {
		if err := (check.HTTP{URL: srv.URL + "/ok"}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("302 passes unfollowed", func(t *testing.T) {
		if err := (check.HTTP{URL: srv.URL + "/redirect"}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
		if n := targetHits.Load(); n != 0 {
			t.Errorf("redirect target hit %d times, want 0", n)
		}
	})
	t.Run("500 fails", func(t *testing.T) {
		url := srv.URL + "/fail"
		err := check.HTTP{URL: url}.Check(checkCtx(t))
		if want := "http " + url + ": status: 500 Internal Server Error"; err == nil || err.Error() != want {
			t.Fatalf("err = %v, want %q", err, want)
		}
	})
	t.Run("large body", func(t *testing.T) {
		if err := (check.HTTP{URL: srv.URL + "/big"}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		err := check.HTTP{URL: srv.URL + "/hang"}.Check(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("password redacted", func(t *testing.T) {
		url := "http://user:secret@" + srv.Listener.Addr().String() + "/fail"
		err := check.HTTP{URL: url}.Check(checkCtx(t))
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Fatalf("err = %v, want a failure without the password", err)
		}
	})
	t.Run("dialer", func(t *testing.T) {
		d, dials := redirectDialer(srv.Listener.Addr().String())
		if err := (check.HTTP{URL: "http://tunnel.test/ok", Dialer: d}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
		if dials.Load() != 1 {
			t.Errorf("dials = %d, want 1", dials.Load())
		}
	})
	t.Run("https", func(t *testing.T) {
		bundle := testcert.Must(t, "127.0.0.1")
		tlsSrv := httptest.NewUnstartedServer(mux)
		tlsSrv.TLS = bundle.ServerConfig()
		tlsSrv.StartTLS()
		t.Cleanup(tlsSrv.Close)
		if err := (check.HTTP{URL: tlsSrv.URL + "/ok", RootCAs: bundle.Pool}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
	})
}

// serveDNS answers A queries for name (rooted, e.g. "healthy.test.") with ip
// on 127.0.0.1 over UDP, other types for name with no records, and every
// other name with NXDOMAIN. It returns the address.
func serveDNS(t *testing.T, name string, ip [4]byte) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp, err := dnsAnswer(buf[:n], name, ip); err == nil {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return pc.LocalAddr().String()
}

func dnsAnswer(query []byte, name string, ip [4]byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	known := strings.EqualFold(q.Name.String(), name)
	rh := dnsmessage.Header{
		ID:                 h.ID,
		Response:           true,
		Authoritative:      true,
		RecursionDesired:   h.RecursionDesired,
		RecursionAvailable: true,
	}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if known && q.Type == dnsmessage.TypeA {
		if err := b.StartAnswers(); err != nil {
			return nil, err
		}
		rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
		if err := b.AResource(rr, dnsmessage.AResource{A: ip}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

func TestDNSCheck(t *testing.T) {
	server := serveDNS(t, "healthy.test.", [4]byte{192, 0, 2, 1})

	t.Run("pass", func(t *testing.T) {
		if err := (check.DNS{Host: "healthy.test.", Server: server}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("NXDOMAIN", func(t *testing.T) {
		err := check.DNS{Host: "missing.test.", Server: server}.Check(checkCtx(t))
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Fatalf("err = %v, want a not-found DNS error", err)
		}
		if want := "dns missing.test.: lookup via " + server + ": no such host"; err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		silent, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer silent.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		err = check.DNS{Host: "healthy.test.", Server: silent.LocalAddr().String()}.Check(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("port 53 by default, through the dialer", func(t *testing.T) {
		var (
			mu    sync.Mutex
			asked []string
		)
		d, dials := redirectDialer(server)
		dialer := check.DialerFunc(func(ctx context.Context, network, address string) (net.Conn, error) {
			mu.Lock()
			asked = append(asked, address)
			mu.Unlock()
			return d(ctx, network, address)
		})
		if err := (check.DNS{Host: "healthy.test.", Server: "127.0.0.1", Dialer: dialer}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
		if dials.Load() == 0 {
			t.Fatal("the dialer was not used")
		}
		mu.Lock()
		defer mu.Unlock()
		for _, a := range asked {
			if a != "127.0.0.1:53" {
				t.Errorf("dialed %q, want 127.0.0.1:53", a)
			}
		}
	})
	t.Run("system servers through the dialer", func(t *testing.T) {
		d, dials := redirectDialer(server)
		if err := (check.DNS{Host: "healthy.test.", Dialer: d}).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
		if dials.Load() == 0 {
			t.Fatal("the dialer was not used")
		}
	})
}

// failingCheck returns a check that fails at once with err.
func failingCheck(err error) check.Checker {
	return check.Func(func(context.Context) error { return err })
}

var passingCheck = check.Func(func(context.Context) error { return nil })

var panickingCheck = check.Func(func(context.Context) error { panic("boom") })

// blockingCheck returns a check that waits for its ctx to end, then counts that in
// ended before returning ctx's error. Reading ended after a combination
// returned tells whether the combination cancelled the check and waited for
// it.
func blockingCheck(ended *atomic.Int32) check.Checker {
	return check.Func(func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			ended.Add(1)
			return ctx.Err()
		case <-time.After(checkSafety):
			return errors.New("never cancelled")
		}
	})
}

func TestAnyOf(t *testing.T) {
	errA, errB := errors.New("a down"), errors.New("b down")

	t.Run("one pass cancels and joins the rest", func(t *testing.T) {
		var ended atomic.Int32
		c := check.AnyOf(blockingCheck(&ended), passingCheck, blockingCheck(&ended))
		if err := c.Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
		if n := ended.Load(); n != 2 {
			t.Errorf("%d of 2 slow checks cancelled and finished before AnyOf returned", n)
		}
	})
	t.Run("all fail", func(t *testing.T) {
		err := check.AnyOf(failingCheck(errA), failingCheck(errB)).Check(checkCtx(t))
		if !errors.Is(err, errA) || !errors.Is(err, errB) {
			t.Fatalf("err = %v, want both failures", err)
		}
		if err.Error() != "a down\nb down" {
			t.Errorf("err = %q, want the failures in order", err)
		}
	})
	t.Run("panic is a failure", func(t *testing.T) {
		if err := check.AnyOf(panickingCheck, passingCheck).Check(checkCtx(t)); err != nil {
			t.Fatalf("with a passing check: %v", err)
		}
		err := check.AnyOf(panickingCheck, failingCheck(errA)).Check(checkCtx(t))
		if !errors.Is(err, check.ErrPanicked) || !errors.Is(err, errA) {
			t.Fatalf("err = %v, want the panic and errA", err)
		}
	})
	t.Run("a nil check is a failure", func(t *testing.T) {
		var nilTCP *check.TCP // a value receiver: calling Check on it panics
		for _, c := range []check.Checker{nil, nilTCP} {
			err := check.AnyOf(c, failingCheck(errA)).Check(checkCtx(t))
			if !errors.Is(err, check.ErrPanicked) || !errors.Is(err, errA) {
				t.Fatalf("%T: err = %v, want the panic and errA", c, err)
			}
		}
	})
	t.Run("caller cancelled", func(t *testing.T) {
		var ended atomic.Int32
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := check.AnyOf(blockingCheck(&ended), blockingCheck(&ended)).Check(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("no checks", func(t *testing.T) {
		if err := check.AnyOf().Check(checkCtx(t)); !errors.Is(err, check.ErrNoChecks) {
			t.Fatalf("err = %v, want ErrNoChecks", err)
		}
	})
	t.Run("later changes to the slice are ignored", func(t *testing.T) {
		checks := []check.Checker{passingCheck}
		c := check.AnyOf(checks...)
		checks[0] = failingCheck(errA)
		if err := c.Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestAllOf(t *testing.T) {
	errA, errB := errors.New("a down"), errors.New("b down")

	t.Run("all pass", func(t *testing.T) {
		if err := check.AllOf(passingCheck, passingCheck).Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("first failure cancels and joins the rest", func(t *testing.T) {
		var ended atomic.Int32
		err := check.AllOf(blockingCheck(&ended), failingCheck(errA), blockingCheck(&ended)).Check(checkCtx(t))
		if !errors.Is(err, errA) {
			t.Fatalf("err = %v, want errA", err)
		}
		if errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want the cancellations it caused left out", err)
		}
		if n := ended.Load(); n != 2 {
			t.Errorf("%d of 2 slow checks cancelled and finished before AllOf returned", n)
		}
	})
	t.Run("several failures", func(t *testing.T) {
		err := check.AllOf(failingCheck(errA), failingCheck(errB)).Check(checkCtx(t))
		if !errors.Is(err, errA) || !errors.Is(err, errB) {
			t.Fatalf("err = %v, want both failures", err)
		}
	})
	t.Run("panic is a failure", func(t *testing.T) {
		var ended atomic.Int32
		err := check.AllOf(panickingCheck, blockingCheck(&ended)).Check(checkCtx(t))
		if !errors.Is(err, check.ErrPanicked) {
			t.Fatalf("err = %v, want ErrPanicked", err)
		}
		if n := ended.Load(); n != 1 {
			t.Errorf("the slow check was not cancelled and joined (ended = %d)", n)
		}
	})
	t.Run("caller deadline kept", func(t *testing.T) {
		var ended atomic.Int32
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		err := check.AllOf(blockingCheck(&ended), blockingCheck(&ended)).Check(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("a check's own cancellation error still fails", func(t *testing.T) {
		if err := check.AllOf(failingCheck(context.Canceled), passingCheck).Check(checkCtx(t)); err == nil {
			t.Fatal("AllOf passed although a check failed")
		}
	})
	t.Run("no checks", func(t *testing.T) {
		if err := check.AllOf().Check(checkCtx(t)); !errors.Is(err, check.ErrNoChecks) {
			t.Fatalf("err = %v, want ErrNoChecks", err)
		}
	})
}

// A name that does not resolve fails a check, and its error says it was
// name resolution, not the tunnel: a VPN's DNS settings can fail lookups
// through a tunnel that works.
func TestResolutionFailureIsNamed(t *testing.T) {
	server := serveDNS(t, "healthy.test.", [4]byte{127, 0, 0, 1})
	d := &net.Dialer{Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", server)
	}}}
	for _, c := range []check.Checker{
		check.TCP{Address: "nosuch.test:443", Dialer: d},
		check.TLS{Address: "nosuch.test:443", Dialer: d},
		check.HTTP{URL: "http://nosuch.test/", Dialer: d},
	} {
		err := c.Check(checkCtx(t))
		if err == nil || !strings.Contains(err.Error(), ": resolve nosuch.test: ") || !strings.Contains(err.Error(), "name resolution failed") {
			t.Errorf("%T: %v, want a failure naming the resolution", c, err)
		}
		if _, ok := errors.AsType[*net.DNSError](err); !ok {
			t.Errorf("%T: %v does not wrap the *net.DNSError", c, err)
		}
	}
	if err := (check.TCP{Address: listenTCP(t).Addr().String(), Dialer: d}).Check(checkCtx(t)); err != nil {
		t.Errorf("an address needs no resolution: %v", err)
	}
	// A resolver that never answers says nothing about the name: the
	// tunnel that carries DNS may be down, so no hint that it is not.
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	// The resolver's lookup outlives the check's context; closing its
	// sockets ends it before the test does.
	var mu sync.Mutex
	var socks []net.Conn
	done := false
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		done = true // and the lookup's next try fails at once
		for _, c := range socks {
			c.Close()
		}
	}()
	mute := &net.Dialer{Resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return nil, errors.New("the test is over")
		}
		c, err := (&net.Dialer{}).DialContext(ctx, "udp", silent.LocalAddr().String())
		if err == nil {
			socks = append(socks, c)
		}
		return c, err
	}}}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := (check.TCP{Address: "healthy.test:443", Dialer: mute}).Check(ctx); err == nil || strings.Contains(err.Error(), "name resolution failed") {
		t.Errorf("a resolver that never answered: %v, want a failure without the hint", err)
	}
}

// A built-in check names itself as its errors do, so that what runs it can
// name it (the full check's failure: "the tunnel answers probes but tls
// 10.0.0.1:443 fails"), a password in a URL left out.
func TestChecksNameThemselvesAsTheirErrorsDo(t *testing.T) {
	refuse := check.DialerFunc(func(context.Context, string, string) (net.Conn, error) { return nil, errors.New("refused") })
	for _, tc := range []struct {
		c    check.Checker
		name string
	}{
		{check.TCP{Address: "192.0.2.1", Dialer: refuse}, "tcp 192.0.2.1:443"},
		{check.TLS{Address: "192.0.2.1:8443", Dialer: refuse}, "tls 192.0.2.1:8443"},
		{check.HTTP{URL: "https://user:secret@192.0.2.1/health", Dialer: refuse}, "http https://user:xxxxx@192.0.2.1/health"},
		{check.DNS{Host: "healthy.test", Server: "192.0.2.1", Dialer: refuse}, "dns healthy.test"},
		{check.DNSQuery{Server: "192.0.2.1", Dialer: refuse}, "udp-dns 192.0.2.1:53"},
		{check.ICMP{Address: "192.0.2.1", Dialer: refuse}, "icmp 192.0.2.1"},
	} {
		name := fmt.Sprint(tc.c)
		err := tc.c.Check(checkCtx(t))
		if name != tc.name || err == nil || !strings.HasPrefix(err.Error(), name+": ") {
			t.Errorf("%T named %q, error %v; want %q, the error's own prefix", tc.c, name, err, tc.name)
		}
	}
}
