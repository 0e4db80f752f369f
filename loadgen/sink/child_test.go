package sink_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

func TestRunChildServesAndReports(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The child shares the port of a listener of the test's, as a
	// Group's children share the parent's; closing it leaves every
	// connection to the child.
	own, err := sink.ListenReusePort(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := own.Addr().String()
	defer own.Close()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- sink.RunChild(ctx, strings.NewReader(`{"listen":"`+addr+`"}`+"\n"), pw)
		pw.Close()
	}()
	dec := json.NewDecoder(pr)
	var m childproc.Message[sink.Stats]
	if err := dec.Decode(&m); err != nil || !m.Ready {
		t.Fatalf("first message %+v, %v; want ready", m, err)
	}
	own.Close()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "hello")
	c.Close()
	// The counters come every second: wait for the connection's.
	for m.Data == nil || m.Data.BytesIn != 5 {
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("no report of the connection: %v", err)
		}
	}
	cancel()
	var last childproc.Message[sink.Stats]
	for dec.More() {
		if err := dec.Decode(&last); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last.Data == nil || last.Data.Conns != 1 || last.Data.BytesIn != 5 {
		t.Errorf("last message %+v, want the counters of one connection", last)
	}
}

func TestRunChildWithoutSettings(t *testing.T) {
	var out strings.Builder
	if err := sink.RunChild(context.Background(), strings.NewReader(""), &out); err == nil || !strings.Contains(out.String(), "error") {
		t.Errorf("RunChild = %v, stdout %q; want an error told to the parent", err, out.String())
	}
}

func TestStatsAdd(t *testing.T) {
	got := sink.Stats{Conns: 1, Open: 2, BytesIn: 3, BytesOut: 4}.Add(sink.Stats{Conns: 10, Open: 20, BytesIn: 30, BytesOut: 40})
	if got != (sink.Stats{Conns: 11, Open: 22, BytesIn: 33, BytesOut: 44}) {
		t.Errorf("Add = %+v", got)
	}
}
