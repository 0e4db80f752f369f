package loadgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// A restart of the lab's client peer, as a VPN restart, breaks every
// connection through the tunnel; the load counts the disruptions and its
// connections come back, and its bytes still agree with the lab's sink.
func TestRunThroughTheLabSurvivesARestart(t *testing.T) {
	lab := harness.New(harness.Config{Link: harness.Settings{Rate: 50_000_000, Delay: time.Millisecond}})
	if err := lab.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	const conns = 20
	w := startWatched(t, loadgen.Config{
		Target:   lab.SinkAddr().String(),
		Dialer:   lab,
		PathName: "lab",
		Conns:    conns,
		Duration: time.Minute, // ended by stop
		Rate:     2e6,
	})
	w.waitFor("all connections open", func(s loadgen.Second) bool { return s.Open == conns })
	if err := lab.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	var disrupted int64
	w.waitFor("the disruptions", func(s loadgen.Second) bool { disrupted += s.Disruptions; return disrupted >= conns })
	w.waitFor("all connections open again", func(s loadgen.Second) bool { return s.Open == conns })
	res, err := w.stop()
	if err != nil {
		t.Fatal(err)
	}
	if res.Disruptions < conns || res.ConnsAchieved != conns {
		t.Errorf("disruptions %d, achieved %d; want at least %d and %d", res.Disruptions, res.ConnsAchieved, conns, conns)
	}
	if got := lab.Server().SinkStats().Conns; got < 2*conns {
		t.Errorf("the lab's sink accepted %d connections, want the %d first ones and as many again", got, conns)
	}
}
