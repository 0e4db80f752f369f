package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/internal/syncbuf"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

// usage is the process's goroutines and live heap, after a collection.
func usage() (goroutines int, heap uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapAlloc
}

// The attack of issue 29: 1,900 Watch streams. The server holds
// DefaultMaxWatches of them and refuses every other at once with
// RESOURCE_EXHAUSTED, so the refused ones cost neither goroutines nor
// memory (the attack added 3 goroutines and 33 KB a stream).
func TestWatchFloodIsBounded(t *testing.T) {
	const attempts, conns = 1900, 8
	addr, stop := serve(t, passingServer(t, server.Config{GRPC: true}))
	defer stop()
	ctx, leave := context.WithCancel(callCtx(t))
	defer leave()
	var clients []healthpb.HealthClient // a connection each
	for range conns {
		clients = append(clients, healthClient(t, addr))
	}
	// The held Watches, spread so that no connection reaches
	// DefaultMaxStreams (past it grpc-go would queue the next call).
	for i := range server.DefaultMaxWatches {
		stream, err := clients[i%conns].Watch(ctx, &healthpb.HealthCheckRequest{})
		if err == nil {
			_, err = stream.Recv()
		}
		if err != nil {
			t.Fatalf("Watch %d, within the bound: %v", i+1, err)
		}
	}
	heldG, heldHeap := usage()

	var wg sync.WaitGroup
	refused := make(chan error, attempts)
	for c := range conns {
		wg.Go(func() {
			for range (attempts - server.DefaultMaxWatches) / conns {
				stream, err := clients[c].Watch(ctx, &healthpb.HealthCheckRequest{})
				if err == nil {
					_, err = stream.Recv()
				}
				refused <- err
			}
		})
	}
	wg.Wait()
	close(refused)
	n := 0
	for err := range refused {
		n++
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "32 Watch calls are in flight") {
			t.Fatalf("Watch past the bound: %v, want RESOURCE_EXHAUSTED saying 32 are in flight", err)
		}
	}
	floodG, floodHeap := usage()
	// What is left of a refused Watch is at most its connection's last,
	// still returning: a few goroutines each. Held, 1,868 of them would
	// be thousands, and tens of MB.
	if extra := floodG - heldG; extra > 8*conns {
		t.Errorf("%d Watches refused left %d more goroutines (%d with %d held), want at most %d", n, extra, floodG, server.DefaultMaxWatches, 8*conns)
	}
	if floodHeap > heldHeap+8<<20 {
		t.Errorf("%d Watches refused grew the heap from %d to %d bytes, want less than 8 MiB more", n, heldHeap, floodHeap)
	}
}

// blockingCheck is a check that signals started and then holds until its
// context ends, as a dial into a dead tunnel does.
func blockingCheck(started chan<- struct{}) check.Checker {
	return check.Func(func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
}

// At shutdown a gRPC Check and a Watch in flight end with UNAVAILABLE and
// a message, not with a stream cut before its status (code Unknown,
// "malformed header: missing HTTP content-type"): on the health listener
// and on a gRPC listener of its own.
func TestShutdownAnswersGRPCCallsInFlight(t *testing.T) {
	for _, ownListener := range []bool{false, true} {
		t.Run(listenerName[ownListener], func(t *testing.T) {
			started := make(chan struct{}, 1)
			srv, err := server.New(blockingCheck(started), server.Config{GRPC: !ownListener, Monitor: middleware.Config{Mode: middleware.ModeProbe}})
			if err != nil {
				t.Fatal(err)
			}
			addr, stop := serveGRPC(t, srv, ownListener)
			client := healthClient(t, addr)
			watch, err := client.Watch(callCtx(t), &healthpb.HealthCheckRequest{})
			if err == nil {
				_, err = watch.Recv()
			}
			if err != nil {
				t.Fatal(err)
			}
			checked := make(chan error, 1)
			go func() {
				_, err := client.Check(callCtx(t), &healthpb.HealthCheckRequest{})
				checked <- err
			}()
			<-started

			stop()
			_, watchErr := watch.Recv()
			for what, err := range map[string]error{"Check": <-checked, "Watch": watchErr} {
				if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "shutting down") {
					t.Errorf("the %s in flight at shutdown: %v, want UNAVAILABLE, shutting down", what, err)
				}
			}
		})
	}
}

// At shutdown a /check/ in flight is answered, as failed, rather than cut.
func TestShutdownAnswersHTTPChecksInFlight(t *testing.T) {
	started := make(chan struct{}, 1)
	srv, err := server.New(blockingCheck(started), server.Config{GRPC: true, Monitor: middleware.Config{Mode: middleware.ModeProbe}})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := serve(t, srv)
	type answer struct {
		code int
		body string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/check/")
		if err != nil {
			got <- answer{err: err}
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- answer{resp.StatusCode, string(body), err}
	}()
	<-started
	stop()
	a := <-got
	http.DefaultClient.CloseIdleConnections()
	if a.err != nil || a.code != http.StatusServiceUnavailable || !strings.HasPrefix(a.body, "fail: ") {
		t.Errorf("the /check/ in flight at shutdown: %d %q %v, want 503 fail", a.code, a.body, a.err)
	}
}

// dial opens a connection to addr, closed when the test ends; every wait
// on it is bounded.
func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

// request sends GET path on c, with header's lines, and reads the answer
// to its end.
func request(t *testing.T, c net.Conn, br *bufio.Reader, path, header string) (*http.Response, string) {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n"+header+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// get answers GET path on a connection of its own.
func get(t *testing.T, addr, path string) (*http.Response, string) {
	t.Helper()
	c, br := dial(t, addr)
	return request(t, c, br, path, "Connection: close\r\n")
}

// holdConnection takes one of addr's places with a kept-alive connection
// that the server has answered; free asks the server to close it and
// returns once it has, its place free.
func holdConnection(t *testing.T, addr string) (free func()) {
	t.Helper()
	c, br := dial(t, addr)
	request(t, c, br, "/", "")
	return func() {
		request(t, c, br, "/", "Connection: close\r\n")
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Fatalf("the held connection after Connection: close: %v, want the server's close", err)
		}
	}
}

// Config.MaxConnections bounds the health listener's connections: a client
// past it is answered at once with a 503 that says why, counted in the
// metrics and logged; once a held connection is closed, the next is
// served.
func TestMaxConnectionsConfig(t *testing.T) {
	var log syncbuf.Buffer
	addr, stop := serve(t, passingServer(t, server.Config{MaxConnections: 1, Metrics: true, Logger: slog.New(slog.NewTextHandler(&log, nil))}))
	defer stop()
	free := holdConnection(t, addr)
	resp, body := get(t, addr, "/")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
		body != "too many connections: this server serves at most 1 at once\n" {
		t.Errorf("a second connection past MaxConnections 1: %s %v %q, want the 503 refusal", resp.Status, resp.Header, body)
	}
	if !strings.Contains(log.String(), "max_connections=1 refused=1 refused_total=1") {
		t.Errorf("the refusal is not logged:\n%s", log.String())
	}
	free()
	resp, body = get(t, addr, server.MetricsPath)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "\ntunnelprobe_connections_refused_total 1\n") {
		t.Errorf("once the held connection closed: %s, want the metrics counting one refusal:\n%s", resp.Status, body)
	}
}

// Refusals are logged at the first, then at most once a minute with the
// count since the last line, and at shutdown the ones not logged yet.
func TestRefusalsAreLoggedOnceAMinute(t *testing.T) {
	var log syncbuf.Buffer
	clock := clockwork.NewFakeClock()
	srv := passingServer(t, server.Config{MaxConnections: 1, Monitor: middleware.Config{Clock: clock}, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	addr, stop := serve(t, srv)
	holdConnection(t, addr)
	refuse := func(n int) {
		for range n {
			if resp, _ := get(t, addr, "/"); resp.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("past MaxConnections 1: %s, want 503", resp.Status)
			}
		}
	}
	refuse(3)
	clock.Advance(time.Minute)
	refuse(2)
	stop()
	var lines []string
	for line := range strings.Lines(log.String()) {
		if strings.Contains(line, "refused connections") {
			lines = append(lines, line[strings.Index(line, "max_connections="):])
		}
	}
	want := []string{"max_connections=1 refused=1 refused_total=1\n", "max_connections=1 refused=3 refused_total=4\n", "max_connections=1 refused=1 refused_total=5\n"}
	if !slices.Equal(lines, want) {
		t.Errorf("logged %q, want %q", lines, want)
	}
}

// A gRPC call on a connection past MaxConnections fails at once with
// UNAVAILABLE and a message naming the bound, on the health listener and
// on a gRPC listener of its own.
func TestMaxConnectionsRefusesGRPC(t *testing.T) {
	for _, ownListener := range []bool{false, true} {
		t.Run(listenerName[ownListener], func(t *testing.T) {
			srv := passingServer(t, server.Config{GRPC: !ownListener, MaxConnections: 1})
			addr, stop := serveGRPC(t, srv, ownListener)
			defer stop()
			// A client that has had its answer keeps its connection.
			if _, err := healthClient(t, addr).Check(callCtx(t), &healthpb.HealthCheckRequest{}); err != nil {
				t.Fatal(err)
			}
			_, err := healthClient(t, addr).Check(callCtx(t), &healthpb.HealthCheckRequest{})
			if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "serves at most 1 at once") {
				t.Errorf("a Check on a second connection past MaxConnections 1: %v, want UNAVAILABLE naming the bound", err)
			}
		})
	}
}
