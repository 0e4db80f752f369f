package loadgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware"
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
	seconds := make(chan loadgen.Second, 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res loadgen.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := loadgen.Run(ctx, loadgen.Config{
			Target:   lab.SinkAddr().String(),
			Dialer:   middleware.DialerFunc(lab.Dial),
			PathName: "lab",
			Conns:    conns,
			Duration: time.Minute, // ended by cancel
			Rate:     2e6,
			OnSecond: func(s loadgen.Second) {
				select {
				case seconds <- s:
				default:
				}
			},
		})
		done <- outcome{res, err}
	}()
	timeout := time.After(30 * time.Second)
	waitFor := func(what string, cond func(loadgen.Second) bool) {
		t.Helper()
		for {
			select {
			case sec := <-seconds:
				if cond(sec) {
					return
				}
			case <-timeout:
				cancel()
				<-done
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("all connections open", func(s loadgen.Second) bool { return s.Open == conns })
	if err := lab.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	var disrupted int64
	waitFor("the disruptions", func(s loadgen.Second) bool { disrupted += s.Disruptions; return disrupted >= conns })
	waitFor("all connections open again", func(s loadgen.Second) bool { return s.Open == conns })
	cancel()
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	if out.res.Disruptions < conns || out.res.ConnsAchieved != conns {
		t.Errorf("disruptions %d, achieved %d; want at least %d and %d", out.res.Disruptions, out.res.ConnsAchieved, conns, conns)
	}
	if got := lab.Server().SinkStats().Conns; got < 2*conns {
		t.Errorf("the lab's sink accepted %d connections, want the %d first ones and as many again", got, conns)
	}
}
