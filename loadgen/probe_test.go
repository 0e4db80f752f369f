package loadgen_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

func TestRunProbe(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	var running, overlap atomic.Int64
	slow := check.Func(func(ctx context.Context) error {
		if running.Add(1) > 1 {
			overlap.Add(1)
		}
		defer running.Add(-1)
		<-ctx.Done() // never answers: ends at ProbeTimeout
		return ctx.Err()
	})
	for _, tc := range []struct {
		name     string
		probe    check.Checker
		timeout  time.Duration
		failures bool
	}{
		{"tcp", check.TCP{Address: s.Addr}, 0, false},
		{"failing", check.Func(func(context.Context) error { return errors.New("down") }), 0, true},
		{"panicking", check.Func(func(context.Context) error { panic("oops") }), 0, true},
		{"slower than its period", slow, 120 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := loadgen.Run(context.Background(), loadgen.Config{
				Target:       s.Addr,
				Conns:        5,
				Duration:     600 * time.Millisecond,
				Rate:         1e6,
				Probe:        tc.probe,
				ProbeEvery:   50 * time.Millisecond,
				ProbeTimeout: tc.timeout,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("probes %d, failures %d, latency %+v", res.Probes, res.ProbeFailures, res.ProbeLatencyMS)
			if res.Probes < 3 {
				t.Errorf("%d probes in 600 ms every 50 ms", res.Probes)
			}
			wantFailures, wantTimed := int64(0), res.Probes
			if tc.failures {
				wantFailures, wantTimed = res.Probes, 0
			}
			if res.ProbeFailures != wantFailures || res.ProbeLatencyMS.Count != wantTimed {
				t.Errorf("failures %d, timed %d; want %d, %d", res.ProbeFailures, res.ProbeLatencyMS.Count, wantFailures, wantTimed)
			}
			var probes, failures int64
			for _, sec := range res.Series {
				probes += sec.Probes
				failures += sec.ProbeFailures
			}
			if probes != res.Probes || failures != res.ProbeFailures {
				t.Errorf("series counts %d probes, %d failures; totals %d, %d", probes, failures, res.Probes, res.ProbeFailures)
			}
		})
	}
	if n := overlap.Load(); n > 0 {
		t.Errorf("%d probes started while another one ran", n)
	}
}
