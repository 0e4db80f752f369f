package sink_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// TestGroupServingStats: once the group is ready its totals are served on
// the stats listener, until the group stops.
func TestGroupServingStats(t *testing.T) {
	stats, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &sink.Group{Listen: "127.0.0.1:0"}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- g.RunServingStats(ctx, stats, func(net.Addr) { close(ready) }) }()
	<-ready

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + stats.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	var got sink.Totals
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || got.Processes != 1 {
		t.Errorf("stats %+v, %v; want the totals of one process", got, err)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("RunServingStats: %v", err)
	}
	if _, err := net.Dial("tcp", stats.Addr().String()); err == nil {
		t.Error("the stats listener still accepts after the group stopped")
	}
}

// TestGroupServingStatsClosesOnFailure: a group that cannot listen closes
// the stats listener it was given, which never served.
func TestGroupServingStatsClosesOnFailure(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	stats, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &sink.Group{Listen: busy.Addr().String()}
	err = g.RunServingStats(context.Background(), stats, func(net.Addr) { t.Error("ready called") })
	if err == nil {
		t.Error("RunServingStats on a busy port: nil error")
	}
	if _, err := stats.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept on the stats listener: %v, want it closed", err)
	}
}
