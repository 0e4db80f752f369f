package prober

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// probeServer serves h and counts the connections it accepts.
func probeServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	return srv, startCounting(t, srv, srv.Start)
}

// startCounting starts srv with start (its Start or StartTLS), counting
// the connections it accepts, and closes it when the test ends.
func startCounting(t *testing.T, srv *httptest.Server, start func()) *atomic.Int32 {
	t.Helper()
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	start()
	t.Cleanup(srv.Close)
	return &conns
}

// Request headers: User-Agent kube-probe/<major>.<minor> of the kubelet
// version imitated (the newest, 1.37, by default), Accept */*, and no
// Accept-Encoding (compression off).
func TestHTTPGetHeaders(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 1)
	srv, _ := probeServer(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	})
	for v, ua := range map[KubeletVersion]string{0: "kube-probe/1.37", 30: "kube-probe/1.30", 20: "kube-probe/1.20"} {
		res := v.HTTPGet(context.Background(), srv.URL, 5*time.Second, nil)
		if res.Outcome != Success || res.Code != 200 || res.Err != nil {
			t.Fatalf("version %d: result %+v, want a 200 success", v, res)
		}
		h := <-got
		if got := h.Get("User-Agent"); got != ua {
			t.Errorf("version %d: User-Agent %q, want %q", v, got, ua)
		}
		if a := h.Get("Accept"); a != "*/*" {
			t.Errorf("Accept %q", a)
		}
		if ae := h.Get("Accept-Encoding"); ae != "" {
			t.Errorf("Accept-Encoding %q: compression is on", ae)
		}
	}
	// HTTPGet is the default version's, whose User-Agent KubeProbeUserAgent
	// names.
	if res := HTTPGet(context.Background(), srv.URL, 5*time.Second, nil); res.Outcome != Success {
		t.Fatalf("result %+v, want a success", res)
	}
	if ua := (<-got).Get("User-Agent"); ua != KubeProbeUserAgent || ua != DefaultKubeletVersion.UserAgent() {
		t.Errorf("HTTPGet's User-Agent %q, KubeProbeUserAgent %q, the default version's %q: want one", ua, KubeProbeUserAgent, DefaultKubeletVersion.UserAgent())
	}
}

// A new connection for every probe: keep-alives are off.
func TestHTTPGetNewConnectionEachProbe(t *testing.T) {
	t.Parallel()
	srv, conns := probeServer(t, func(w http.ResponseWriter, r *http.Request) {})
	for range 3 {
		if res := HTTPGet(context.Background(), srv.URL, 5*time.Second, nil); res.Outcome != Success {
			t.Fatalf("result %+v", res)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 probes, want 3", n)
	}
}

// The client timeout covers the body: a server that stalls mid-body sees its
// request context cancelled, and the probe errs (Unknown, which the kubelet
// retries and then throws away) after the timeout. A stall before the
// headers is a failure.
func TestHTTPGetTimeout(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{}, 2)
	srv, _ := probeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
		cancelled <- struct{}{}
	})

	res := HTTPGet(context.Background(), srv.URL+"/body", 100*time.Millisecond, nil)
	if res.Outcome != Unknown || res.Code != 200 || res.Err == nil {
		t.Errorf("stall mid-body: %+v, want unknown with a 200 and an error", res)
	}
	if res.Duration < 100*time.Millisecond {
		t.Errorf("stall mid-body: returned after %v, before the timeout", res.Duration)
	}
	<-cancelled

	res = HTTPGet(context.Background(), srv.URL+"/headers", 100*time.Millisecond, nil)
	if res.Outcome != Failure || res.Code != 0 || res.Err == nil {
		t.Errorf("stall before headers: %+v, want a failure without status", res)
	}
	<-cancelled
}

// Only the first 10 KiB of the body are read, and truncation is not an
// error: the probe returns without waiting for the rest.
func TestHTTPGetBodyCap(t *testing.T) {
	t.Parallel()
	srv, _ := probeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 10<<10)))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	})
	res := HTTPGet(context.Background(), srv.URL, time.Minute, nil)
	if res.Outcome != Success || res.Err != nil {
		t.Errorf("result %+v, want a success", res)
	}
	if len(res.Body) == 0 || len(res.Body) > maxLoggedBody {
		t.Errorf("logged body of %d bytes", len(res.Body))
	}
}

// 200-399 pass, a 3xx (an unfollowed redirect) with a warning; 400 and up
// fail. Redirects are followed to the same host only, at most 10.
func TestHTTPGetStatus(t *testing.T) {
	t.Parallel()
	var hops atomic.Int32
	srv, _ := probeServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/other":
			// 127.0.0.1 and localhost are different host names.
			http.Redirect(w, r, strings.Replace("http://"+r.Host+"/ok", "127.0.0.1", "localhost", 1), http.StatusMovedPermanently)
		case "/loop":
			hops.Add(1)
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/ok":
			w.WriteHeader(http.StatusNoContent)
		case "/399":
			w.WriteHeader(399)
		case "/404":
			w.WriteHeader(http.StatusNotFound)
		case "/500":
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	tests := []struct {
		path string
		want Outcome
		code int
		err  string
	}{
		{"/ok", Success, 204, ""},
		{"/same", Success, 204, ""},
		{"/other", Warning, 301, "probe terminated redirects"},
		{"/399", Warning, 399, "probe terminated redirects"},
		{"/loop", Failure, 0, "stopped after 10 redirects"},
		{"/404", Failure, 404, "statuscode: 404"},
		{"/500", Failure, 500, "statuscode: 500"},
	}
	for _, tt := range tests {
		res := HTTPGet(context.Background(), srv.URL+tt.path, 5*time.Second, nil)
		if res.Outcome != tt.want || res.Code != tt.code {
			t.Errorf("%s: %v %d, want %v %d (%v)", tt.path, res.Outcome, res.Code, tt.want, tt.code, res.Err)
		}
		if tt.err == "" && res.Err != nil || tt.err != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tt.err)) {
			t.Errorf("%s: error %v, want %q", tt.path, res.Err, tt.err)
		}
	}
	if n := hops.Load(); n != 10 {
		t.Errorf("%d requests in the redirect loop, want 10", n)
	}
}

// A refused connection is a failure.
func TestHTTPGetRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	res := HTTPGet(context.Background(), "http://"+addr+"/", 5*time.Second, nil)
	if res.Outcome != Failure || res.Err == nil || res.Code != 0 {
		t.Errorf("result %+v, want a failure", res)
	}
}

// TLS is not verified: a self-signed certificate passes.
func TestHTTPGetTLSNotVerified(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	if res := HTTPGet(context.Background(), srv.URL, 5*time.Second, nil); res.Outcome != Success {
		t.Errorf("result %+v, want a success", res)
	}
}

// The probe dials through the given Dialer.
func TestHTTPGetDialer(t *testing.T) {
	t.Parallel()
	srv, _ := probeServer(t, func(w http.ResponseWriter, r *http.Request) {})
	var dials atomic.Int32
	d := dialerFunc(func(ctx context.Context, network, _ string) (net.Conn, error) {
		dials.Add(1)
		var nd net.Dialer
		return nd.DialContext(ctx, network, srv.Listener.Addr().String())
	})
	if res := HTTPGet(context.Background(), "http://tunnel.test/", 5*time.Second, d); res.Outcome != Success {
		t.Errorf("result %+v, want a success", res)
	}
	if dials.Load() != 1 {
		t.Errorf("%d dials through the Dialer, want 1", dials.Load())
	}
}

type dialerFunc func(ctx context.Context, network, address string) (net.Conn, error)

func (f dialerFunc) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return f(ctx, network, address)
}
