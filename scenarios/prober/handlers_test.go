package prober

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// The tcpSocket rules: a connection opened within the timeout passes,
// whatever the server would answer; a refused one or a timeout fails.
func TestTCPSocketRules(t *testing.T) {
	t.Parallel()
	// A health server reporting a dead tunnel: httpGet fails, tcpSocket
	// passes, since it only connects.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "tunnel down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	if r := HTTPGet(t.Context(), srv.URL, time.Second, nil); r.Outcome != Failure {
		t.Fatalf("httpGet of the unhealthy server: %v", r.Outcome)
	}
	if r := TCPSocket(t.Context(), addr, time.Second, nil); r.Outcome != Success || r.Err != nil {
		t.Errorf("tcpSocket of a listening server: %v, %v; want success", r.Outcome, r.Err)
	}

	// Refused: a port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	if r := TCPSocket(t.Context(), closed, time.Second, nil); r.Outcome != Failure || r.Err == nil {
		t.Errorf("tcpSocket of a closed port: %v, %v; want a failure", r.Outcome, r.Err)
	}

	// A connect that never completes (a dead tunnel) fails at the timeout.
	hang := check.DialerFunc(func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	const timeout = 200 * time.Millisecond
	r := TCPSocket(t.Context(), addr, timeout, hang)
	if r.Outcome != Failure || !errors.Is(r.Err, context.DeadlineExceeded) || r.Duration < timeout {
		t.Errorf("tcpSocket that cannot connect: %v after %v, %v; want a failure at the %v timeout", r.Outcome, r.Duration, r.Err, timeout)
	}
}

// The exec rules: exit 0 passes, another code fails, the timeout fails and
// kills the command with what it started, a command that cannot start
// errs.
func TestExecRules(t *testing.T) {
	t.Parallel()
	if r := Exec(t.Context(), []string{"sh", "-c", "echo ok"}, 5*time.Second); r.Outcome != Success || r.Body != "ok\n" {
		t.Errorf("exit 0: %v, body %q; want success with the output", r.Outcome, r.Body)
	}
	if r := Exec(t.Context(), []string{"sh", "-c", "echo down >&2; exit 3"}, 5*time.Second); r.Outcome != Failure ||
		!strings.Contains(r.Err.Error(), "code 3") || r.Body != "down\n" {
		t.Errorf("exit 3: %v, %v, body %q; want a failure naming the code, with stderr", r.Outcome, r.Err, r.Body)
	}
	// More output than the kubelet reads is cut, not an error.
	if r := Exec(t.Context(), []string{"sh", "-c", "head -c 100000 /dev/zero"}, 5*time.Second); r.Outcome != Success || len(r.Body) != maxLoggedBody {
		t.Errorf("100 kB of output: %v, %d bytes kept; want success", r.Outcome, len(r.Body))
	}
	if r := Exec(t.Context(), []string{"/nonexistent/probe"}, 5*time.Second); r.Outcome != Unknown || r.Err == nil {
		t.Errorf("a command that does not exist: %v, %v; want a prober error (unknown)", r.Outcome, r.Err)
	}
}

// A kubelet with an exec probe whose command cannot start tries three
// times per tick and throws the results away: it never restarts.
func TestKubeletExecThatCannotStartNeverRestarts(t *testing.T) {
	t.Parallel()
	h := newRig(t)
	k := h.realKubelet(KubeletConfig{Exec: []string{"/nonexistent/probe"}})
	h.start(k.Run)
	h.waitIdle()
	for range 3 {
		h.advance(10 * time.Second)
	}
	wantEqual(t, "probe times", h.probeTimes(), secs(0, 0, 0, 10, 10, 10, 20, 20, 20, 30, 30, 30))
	wantEqual(t, "decisions", h.decisionLog(), []string{"0s c1 live"})
}

// A kubelet with a tcpSocket probe restarts only when connecting fails.
func TestKubeletTCPSocket(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // refused from now on
	h := newRig(t)
	k := h.realKubelet(KubeletConfig{TCPSocket: addr})
	h.start(k.Run)
	h.waitIdle()
	h.advance(10 * time.Second)
	h.advance(10 * time.Second)
	wantEqual(t, "decisions", h.decisionLog(), []string{"0s c1 live", "20s c1 restart"})
}
