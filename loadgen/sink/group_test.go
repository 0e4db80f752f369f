package sink_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// TestGroupOneProcess: a Group of one process says where it listens, counts
// what it echoes, serves its totals and returns nil when stopped.
func TestGroupOneProcess(t *testing.T) {
	g := &sink.Group{Listen: "127.0.0.1:0", Echo: true}
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, func(a net.Addr) { ready <- a }) }()
	addr := <-ready

	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	c.Close()

	rec := httptest.NewRecorder()
	g.StatsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", rec.Code)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	// Run has returned: every connection has been counted.
	rec = httptest.NewRecorder()
	g.StatsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	var got sink.Totals
	if err := json.NewDecoder(rec.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Conns != 1 || got.BytesIn != 5 || got.BytesOut != 5 || got.Processes != 1 {
		t.Errorf("totals %+v, want 1 connection, 5 bytes each way, 1 process", got)
	}
}

// TestGroupPortInUse: one process listens plainly, so a port in use is an
// error naming the address, and ready is never called.
func TestGroupPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	g := &sink.Group{Listen: ln.Addr().String()}
	err = g.Run(context.Background(), func(net.Addr) { t.Error("ready called") })
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("Run: %v, want an error naming %s", err, ln.Addr())
	}
}
