package prober

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// h2OnlyServer serves h over TLS that speaks HTTP/2 alone: its ALPN offers
// h2 only, and a connection that did not negotiate it is closed, so an
// HTTP/1.1 request gets EOF. It counts the connections it accepts.
func h2OnlyServer(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	var protocols http.Protocols
	protocols.SetHTTP2(true)
	srv.Config.Protocols = &protocols
	srv.EnableHTTP2 = true
	return srv, startCounting(t, srv, srv.StartTLS)
}

// An HTTPS server that speaks HTTP/2 alone passes, as the kubelet's probe
// passes it: the kubelet's transport negotiates HTTP/2 over TLS
// (utilnet.SetTransportDefaults configures HTTP/2 on it). The request
// carries the same headers as over HTTP/1.1, compression still off, and
// each probe opens a connection of its own, keep-alives off.
func TestHTTPGetHTTP2OnlyServer(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	srv, conns := h2OnlyServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.Write([]byte("ok"))
	}))
	res := HTTPGet(t.Context(), srv.URL, 5*time.Second, nil)
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

	if res := HTTPGet(t.Context(), srv.URL, 5*time.Second, nil); res.Outcome != Success {
		t.Fatalf("second probe: %+v", res)
	}
	<-got
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections for 2 probes, want 2", n)
	}
}
