package scenarios

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// TestRunSmallScenario runs the whole machinery in a few seconds: two
// configurations on their own labs, a small load, then an outage that each
// must detect.
func TestRunSmallScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 12 s")
	}
	kubelet := ProberSpec{Kind: "kubelet", Period: D(time.Second), Timeout: D(time.Second), FailureThreshold: 2}
	probeOnly, loop := kubelet, kubelet
	probeOnly.Endpoint = "/check/?timeout=900ms"
	loop.Endpoint = "/"
	spec := Spec{
		Name:     "small",
		Seed:     3,
		Duration: D(12 * time.Second),
		Link: LinkSpec{
			Rate: 20_000_000, Delay: D(2 * time.Millisecond), Queue: harness.QueueLimit{Packets: 256},
			Changes: []LinkChange{{At: D(3 * time.Second), Delay: &Duration{5 * time.Millisecond}}},
			Outages: []Window{{Start: D(7 * time.Second), Duration: D(5 * time.Second)}},
		},
		Load:      LoadSpec{Conns: 50, Share: 0.5, Ramp: D(2 * time.Second)},
		Container: ContainerSpec{StartDelay: D(500 * time.Millisecond)},
		Configs: []ConfigSpec{
			{Name: "probe-only", Health: HealthSpec{Mode: middleware.ModeProbe}, Prober: probeOnly},
			{Name: "loop", Health: HealthSpec{
				Mode: middleware.ModeLoop, Period: D(time.Second), Timeouts: middleware.Ladder{time.Second}, Heal: true,
				HealBackoff: &BackoffSpec{Initial: D(time.Second), Step: D(time.Second)},
			}, Prober: loop},
		},
	}
	rep, err := Run(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Interrupted || len(rep.Order) != 2 || rep.PeakRSSBytes <= 0 {
		t.Fatalf("report: interrupted %v, order %v, peak RSS %d", rep.Interrupted, rep.Order, rep.PeakRSSBytes)
	}
	for _, name := range rep.Order {
		c := rep.Configs[name]
		if !c.OutageDetected {
			t.Errorf("%s missed the outage: %+v", name, c.Timeline)
		}
		if c.Probes == 0 || len(c.Timeline.Checks) == 0 || c.ConnsAchieved != 50 || c.Utilisation <= 0.3 {
			t.Errorf("%s: %d probes, %d checks, %d conns, utilisation %.2f", name, c.Probes, len(c.Timeline.Checks), c.ConnsAchieved, c.Utilisation)
		}
	}
	if rep.Configs["probe-only"].Heals != 0 {
		t.Error("probe mode healed")
	}
	dir := t.TempDir()
	if err := rep.WriteResults(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.md", "report.json", "timeline.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestRunStopsWhenInterrupted(t *testing.T) {
	spec := QuickSuite()
	spec.Load.Conns = 10
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Run(ctx, spec, Options{})
	if err != nil {
		// The labs may not even start on a cancelled context.
		return
	}
	if !rep.Interrupted {
		t.Error("a cancelled run is not marked interrupted")
	}
}

// A trial holds its health server's address from the start: closed until
// the server came up, the port could become another trial's probe's source
// port, and the server could not listen (a run lost to it in CI).
func TestTrialHoldsItsAddress(t *testing.T) {
	spec := QuickSuite()
	tr, err := newTrial(t.Context(), spec, spec.Configs[0], 0, scenarioBuffers)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	if ln, err := net.Listen("tcp", tr.addr); err == nil {
		ln.Close()
		t.Fatalf("%s was free before the health server came up", tr.addr)
	}
}
