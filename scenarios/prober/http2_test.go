package prober

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/tunnelprobe/tunnelprobe/internal/pki"
)

// h2OnlyServer serves h over TLS that offers HTTP/2 alone: ALPN h2 only and
// an http2.Server on every connection, so an HTTP/1.1 request gets the
// connection closed. It returns the server's URL and counts the
// connections it accepts.
func h2OnlyServer(t *testing.T, h http.Handler) (string, *atomic.Int32) {
	t.Helper()
	ca, err := pki.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{http2.NextProtoTLS},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http2.Server{}
	var (
		accepted atomic.Int32
		wg       sync.WaitGroup
		mu       sync.Mutex
		conns    = map[net.Conn]bool{}
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // the listener was closed
			}
			accepted.Add(1)
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				// http2.Server checks the TLS version it reads from the
				// connection: finish the handshake first.
				if c.(*tls.Conn).Handshake() == nil {
					srv.ServeConn(c, &http2.ServeConnOpts{Handler: h})
				}
				c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		// A probe closes its connection, but one that failed half-way
		// may leave the server waiting for a preface: close what is left
		// so that every ServeConn returns.
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "https://" + ln.Addr().String() + "/", &accepted
}

// An HTTPS server that speaks HTTP/2 alone passes, as the kubelet's probe
// passes it: the kubelet's transport negotiates HTTP/2 over TLS
// (utilnet.SetTransportDefaults configures x/net/http2 on it). The request
// carries the same headers as over HTTP/1.1, compression still off, and
// each probe opens a connection of its own, keep-alives off.
func TestHTTPGetHTTP2OnlyServer(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	url, accepted := h2OnlyServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.Write([]byte("ok"))
	}))
	res := HTTPGet(t.Context(), url, 5*time.Second, nil)
	if res.Outcome != Success || res.Code != http.StatusOK || res.Body != "ok" {
		t.Fatalf("result %+v, want a 200 success", res)
	}
	r := <-got
	if r.ProtoMajor != 2 {
		t.Errorf("request over %s, want HTTP/2", r.Proto)
	}
	if ua := r.Header.Get("User-Agent"); ua != KubeProbeUserAgent {
		t.Errorf("User-Agent %q, want %q", ua, KubeProbeUserAgent)
	}
	if a, ae := r.Header.Get("Accept"), r.Header.Get("Accept-Encoding"); a != "*/*" || ae != "" {
		t.Errorf("Accept %q, Accept-Encoding %q; want */* and none", a, ae)
	}

	if res := HTTPGet(t.Context(), url, 5*time.Second, nil); res.Outcome != Success {
		t.Fatalf("second probe: %+v", res)
	}
	<-got
	if n := accepted.Load(); n != 2 {
		t.Errorf("%d connections for 2 probes, want 2", n)
	}
}
