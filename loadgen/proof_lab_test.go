package loadgen_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// The trap the light probe closes, on the lab: a load pulling data through
// the tunnel, then the uplink alone drops everything. The far side keeps
// retransmitting into the tunnel, so the client's receive counter keeps
// growing; the check must still fail, a Window after the last answer to the
// monitor's own probe.
func TestLightProbeDetectsAnUplinkOutageUnderDownload(t *testing.T) {
	lab := harness.New(harness.Config{Link: harness.Settings{Rate: 20_000_000, Delay: 5 * time.Millisecond}})
	if err := lab.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	const conns = 50
	w := startWatched(t, loadgen.Config{
		Target: lab.SinkAddr().String(), Dialer: lab, PathName: "lab",
		Conns: conns, Duration: time.Minute, Direction: loadgen.Down, // ended by stop
	})
	w.waitFor("all connections open", func(s loadgen.Second) bool { return s.Open == conns })

	probe := lab.LightProbe()
	ev := middleware.Evidence{Probes: []middleware.LightProbe{probe}, Source: lab.Client()}
	answered := make(chan struct{}, 1)
	m, err := middleware.New(lab.TLSCheck(), middleware.Config{
		Mode: middleware.ModeProbe, Timeouts: middleware.Ladder{9 * time.Second}, Evidence: &ev,
		Observer: middleware.ObserverFuncs{OnLightProbe: func(r middleware.LightProbeResult) {
			if r.Err == nil {
				select {
				case answered <- struct{}{}:
				default:
				}
			}
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- m.Run(ctx) }()
	defer func() { stop(); <-ran }()

	check := func() middleware.Result {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return m.Probe(cctx)
	}
	select { // until the first answer the active check decides
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("no light probe was answered")
	}
	if r := check(); !r.Passed() || r.DecidedBy() != middleware.ProofLightProbe {
		t.Fatalf("before the outage: %v (%s), want a pass on the probe's answer", r.Err, r.Evidence)
	}
	before, err := lab.Client().ReadCounters()
	if err != nil {
		t.Fatal(err)
	}
	if err := lab.Link().Update(func(s *harness.Settings) { s.UplinkDown = true }); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	var r middleware.Result
	for r = check(); r.Passed(); r = check() {
		if time.Since(down) > 20*time.Second {
			t.Fatal("the uplink outage was not detected in 20 s")
		}
	}
	took := time.Since(down)
	after, err := lab.Client().ReadCounters()
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(r.Err, middleware.ErrNoProofOfLife) || r.DecidedBy() != middleware.ProofLightProbe {
		t.Errorf("the check failed with %v (%s), want no proof of life", r.Err, r.DecidedBy())
	}
	// The answers stop when the outage begins (give or take a probe in
	// flight); the check fails a Window after the last one. The bound
	// leaves room for a loaded machine.
	if limit := middleware.DefaultEvidenceWindow + 2*middleware.DefaultEvidenceInterval + 3*time.Second; took > limit {
		t.Errorf("detected after %v, want within %v", took, limit)
	}
	if after.RxBytes <= before.RxBytes {
		t.Errorf("no traffic came in during the outage (%d -> %d bytes): the trap was not set", before.RxBytes, after.RxBytes)
	}
	t.Logf("detected after %v; %d bytes came in meanwhile", took.Round(10*time.Millisecond), after.RxBytes-before.RxBytes)
}
