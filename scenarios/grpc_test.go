package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// A kubelet grpc prober works as any other kind: the trial's health server
// answers gRPC on its port, the probes pass on the working tunnel, and the
// outage fails them until the container is restarted.
func testRunGRPCProber(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 8 s")
	}
	grpcProber := ProberSpec{Kind: "kubelet", Handler: handlerGRPC, Period: D(time.Second), Timeout: D(time.Second), FailureThreshold: 2}
	spec := shortSpec("grpc", 5, 8*time.Second, 256, []Window{{Start: D(4 * time.Second), Duration: D(4 * time.Second)}},
		LoadSpec{Conns: 10, Share: 0.2, Ramp: D(time.Second)},
		ConfigSpec{
			Name: "grpc", Prober: grpcProber,
			// The check's timeout is the probe's: its deadline is the call's.
			Health: HealthSpec{Mode: middleware.ModeProbe, Timeouts: middleware.Ladder{time.Second}},
		})
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := rep.Configs["grpc"]
	if rep.Interrupted || !ok {
		t.Fatalf("report: interrupted %v, configs %v", rep.Interrupted, rep.Order)
	}
	if c.Prober != `kubelet grpc ""` || c.Probes < 3 || c.ProbeSuccessRatio != 1 || len(c.Timeline.Checks) == 0 {
		t.Errorf("prober %q: %d probes, %.0f%% passed, %d checks; want grpc probes passing on the working link, running checks",
			c.Prober, c.Probes, 100*c.ProbeSuccessRatio, len(c.Timeline.Checks))
	}
	if c.FalseRestarts != 0 || !c.OutageDetected {
		t.Errorf("%d false restarts, outage detected %v: %+v", c.FalseRestarts, c.OutageDetected, c.Timeline)
	}
}
