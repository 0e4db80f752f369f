package loadgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
)

// BenchmarkRamp runs, in each op, a whole load of 1,000 loopback
// connections to a sink, opened as fast as possible, and reports the
// ramp's connect rate (over ramp_seconds): the cost of the load's own path
// from its schedule to an open connection. B/op and allocs/op are the whole
// run's, its start and stop included. The flows are
// paced at 1 kbit/s in all, so that the op measures the ramp, not the
// traffic. ci/bench-load.sh compares whole ramps, under greedy flows, with
// ci/connref's plain dial loop.
//
//	go test -run '^$' -bench Ramp -benchmem ./loadgen
func BenchmarkRamp(b *testing.B) {
	s := startSink(b, "127.0.0.1:0")
	const conns = 1000
	var opened int64
	var ramp float64
	for b.Loop() {
		res, err := loadgen.Run(context.Background(), loadgen.Config{
			Target: s.Addr, Conns: conns, Duration: time.Millisecond,
			Rate: rate.Rate(1000), NoReconnect: true,
		})
		if err != nil {
			b.Fatal(err)
		}
		if res.RampSeconds == nil || res.ConnsAchieved != conns {
			b.Fatalf("opened %d of %d, ramp ended: %v", res.ConnsAchieved, conns, res.RampSeconds != nil)
		}
		opened += res.ConnsAchieved
		ramp += *res.RampSeconds
	}
	b.ReportMetric(float64(opened)/ramp, "connects/s")
}
