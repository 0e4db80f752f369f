package scenarios

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// testRunSmallScenario runs the whole machinery in a few seconds: two
// configurations on their own labs, a small load, then an outage that each
// must detect unless it acted on the working tunnel before.
func testRunSmallScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 12 s")
	}
	// The first probes wait for the ramp, as the suites' do (a startup
	// probe would hold a real liveness probe back): probed at once, a
	// loop whose first check had not ended by the second probe was
	// restarted for "no check has run yet" on a busy machine.
	kubelet := ProberSpec{Kind: "kubelet", Period: D(time.Second), Timeout: D(time.Second), FailureThreshold: 2, InitialDelay: D(2 * time.Second)}
	probeOnly, loop := kubelet, kubelet
	probeOnly.Endpoint = "/check/?timeout=900ms"
	loop.Endpoint = "/"
	spec := shortSpec("small", 3, 12*time.Second, 256, []Window{{Start: D(7 * time.Second), Duration: D(5 * time.Second)}},
		LoadSpec{Conns: 50, Share: 0.5, Ramp: D(2 * time.Second)},
		ConfigSpec{Name: "probe-only", Health: HealthSpec{Mode: middleware.ModeProbe}, Prober: probeOnly},
		ConfigSpec{Name: "loop", Health: HealthSpec{
			Mode: middleware.ModeLoop, Period: D(time.Second), Timeouts: middleware.Ladder{time.Second}, Heal: true,
			HealBackoff: &BackoffSpec{Initial: D(time.Second), Step: D(time.Second)},
		}, Prober: loop})
	spec.Link.Changes = []LinkChange{{At: D(3 * time.Second), Delay: &Duration{5 * time.Millisecond}}}
	rep, err := Run(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Interrupted || len(rep.Order) != 2 || rep.PeakRSSBytes <= 0 {
		t.Fatalf("report: interrupted %v, order %v, peak RSS %d", rep.Interrupted, rep.Order, rep.PeakRSSBytes)
	}
	for _, name := range rep.Order {
		c := rep.Configs[name]
		if len(c.Timeline.Probes) == 0 || c.ConnsAchieved != 50 || c.Utilisation == nil || *c.Utilisation <= 0 {
			t.Errorf("%s: %d probes, %d conns, utilisation %s", name, len(c.Timeline.Probes), c.ConnsAchieved, fmtShare(c.Utilisation))
		}
		// A configuration that restarted or healed the working tunnel (a
		// check that timed out on a busy machine) broke its load, and can
		// be in its back-off for the whole outage: the report counts that.
		// Otherwise it recorded checks, its load filled half the link, and
		// it acted on the outage.
		if c.FalseRestarts > 0 || c.FalseHeals > 0 {
			t.Logf("%s restarted the working tunnel %d times and healed it %d times", name, c.FalseRestarts, c.FalseHeals)
			continue
		}
		if !c.OutageDetected {
			t.Errorf("%s missed the outage: %+v", name, c.Timeline)
		}
		if len(c.Timeline.Checks) == 0 || *c.Utilisation <= 0.3 {
			t.Errorf("%s: %d checks, utilisation %s", name, len(c.Timeline.Checks), fmtShare(c.Utilisation))
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

// An MTU black hole end to end: the link's MTU falls to 1280 for 6 s of a
// loaded run. The load's full-size segments stop crossing, while the light
// probe's small echoes through the lab still get answers, so evidence
// passes every check and never notices; the active check's TLS handshake
// stalls, and probe-only restarts the tunnel inside the black hole.
func testRunMTUBlackHole(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 10 s")
	}
	hole := Window{Start: D(3 * time.Second), Duration: D(6 * time.Second), MTU: 1280}
	// Timeouts to spare on the working link, on a busy machine too; a
	// probe that stalls fails after 2 s, so two fail within the hole.
	kubelet := ProberSpec{Kind: "kubelet", Endpoint: "/check/?timeout=2s", Period: D(time.Second), Timeout: D(3 * time.Second), FailureThreshold: 2}
	// A short queue: what it holds as the hole starts still crosses.
	spec := shortSpec("mtu", 1, 10*time.Second, 64, []Window{hole}, LoadSpec{Conns: 10, Ramp: D(time.Second)},
		ConfigSpec{Name: "evidence", Health: evidenceHealth(), Prober: evidenceProber(time.Second)},
		ConfigSpec{Name: "probe-only", Health: HealthSpec{Mode: middleware.ModeProbe}, Prober: kubelet})
	rep, err := Run(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev := rep.Configs["evidence"]
	if len(ev.Outages) != 1 || ev.Outages[0].MTU != 1280 || ev.Outages[0].Utilisation == nil {
		t.Fatalf("evidence's outages: %+v, want the black hole with its goodput", ev.Outages)
	}
	if ev.Utilisation == nil {
		t.Fatal("the working link's goodput was not measured")
	}
	if working, hole := *ev.Utilisation, *ev.Outages[0].Utilisation; working < 0.3 || hole > working/5 {
		t.Errorf("goodput %.0f%% of the rate on the working link, %.1f%% in the MTU black hole; want it collapsed", 100*working, 100*hole)
	}
	for _, g := range ev.Timeline.ProofGaps {
		if float64(g[1]) > hole.Start.Seconds() && float64(g[0]) < hole.End().Seconds() {
			t.Errorf("no answer to the light probe from %.1fs to %.1fs, in the black hole: its small echoes should cross", g[0], g[1])
		}
	}
	answered := 0
	for _, c := range ev.Timeline.Checks {
		if float64(c.At) >= hole.Start.Seconds() && float64(c.At) < hole.End().Seconds() && c.Passed && c.DecidedBy != "active" {
			answered++
		}
	}
	if answered == 0 || ev.OutageDetected || len(ev.Timeline.Restarts) > 0 {
		t.Errorf("evidence: %d checks passed on proof of life in the black hole, detected %v, restarts %v; want its probe answered and nothing noticed",
			answered, ev.OutageDetected, ev.Timeline.Restarts)
	}
	if po := rep.Configs["probe-only"]; !po.OutageDetected || po.FalseRestarts > 0 {
		t.Errorf("probe-only: detected %v, %d false restarts; want the stalled TLS check to restart it in the black hole only",
			po.OutageDetected, po.FalseRestarts)
	}
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "queue 64p, MTU unlimited;") || !strings.Contains(md.String(), "MTU black hole (1280 bytes) from 3s to 9s.") {
		t.Errorf("report.md does not describe the link's MTU and the black hole:\n%s", md.String())
	}
}

// shortSpec is a run of d on a fast link (20 Mbit/s, 2 ms one way, a
// queue of queue packets) with these outages, this load and these
// configurations, a container back 500 ms after a restart.
func shortSpec(name string, seed uint64, d time.Duration, queue int, outages []Window, load LoadSpec, configs ...ConfigSpec) Spec {
	return Spec{
		Name:      name,
		Seed:      seed,
		Duration:  D(d),
		Link:      LinkSpec{Rate: 20_000_000, Delay: D(2 * time.Millisecond), Queue: harness.QueueLimit{Packets: queue}, Outages: outages},
		Load:      load,
		Container: ContainerSpec{StartDelay: D(500 * time.Millisecond)},
		Configs:   configs,
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

// A run stopped before its outage is judged on what ran: the outage it never
// reached is neither missed nor counted, the working time ends where the
// run did, and the utilisation covers the load that ran. Until this was
// fixed, a Ctrl-C at 20 s of --quick called every configuration's outage
// at 50 s missed, with 50 s of working time and 0% utilisation. A second
// run is stopped inside its outage: that one is reported, cut where the
// run ended.
func testRunInterruptedIsJudgedOnWhatRan(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 8 s")
	}
	kubelet := ProberSpec{Kind: "kubelet", Period: D(time.Second), Timeout: D(time.Second), FailureThreshold: 3, Endpoint: "/check/?timeout=900ms"}
	for _, tc := range []struct {
		name        string
		outageStart time.Duration
		outages     int
	}{{"before the outage", 30 * time.Second, 0}, {"in the outage", 3 * time.Second, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := shortSpec("interrupted", 3, 40*time.Second, 256, []Window{{Start: D(tc.outageStart), Duration: D(5 * time.Second)}},
				LoadSpec{Conns: 20, Share: 0.5, Ramp: D(time.Second)},
				ConfigSpec{Name: "probe-only", Health: HealthSpec{Mode: middleware.ModeProbe}, Prober: kubelet})
			// The Ctrl-C: at the first progress line, 4 s into the run
			// whatever the labs took to start.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rep, err := Run(ctx, spec, Options{Progress: cancelOnWrite(cancel), ProgressEvery: 4 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Interrupted {
				t.Fatal("not marked interrupted")
			}
			if err := rep.Validate(); err != nil {
				t.Errorf("report.json would not validate: %v", err)
			}
			c := rep.Configs["probe-only"]
			if len(c.Outages) != tc.outages {
				t.Fatalf("%d outage reports, want %d: %+v", len(c.Outages), tc.outages, c.Outages)
			}
			if tc.outages > 0 && c.Outages[0].End != rep.DurationSeconds {
				t.Errorf("the outage under way ends at %v s, not where the run ended (%v s)", c.Outages[0].End, rep.DurationSeconds)
			}
			if tc.outages > 0 && !c.Outages[0].Detected && !c.Outages[0].TooShort {
				t.Errorf("the outage the run stopped in, not acted on, is called missed: %+v", c.Outages[0])
			}
			if want := min(rep.DurationSeconds, tc.outageStart.Seconds()); c.WorkingSeconds != want {
				t.Errorf("working for %v s of a %v s run, want %v s", c.WorkingSeconds, rep.DurationSeconds, want)
			}
			if c.Utilisation == nil || *c.Utilisation <= 0 {
				t.Errorf("utilisation %s over the load that ran for %v s", fmtShare(c.Utilisation), rep.DurationSeconds)
			}
			var md strings.Builder
			if err := rep.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			if tc.outages == 0 && strings.Contains(md.String(), "did not act on the outage") {
				t.Errorf("report.md calls an outage the run never reached missed:\n%s", md.String())
			}
		})
	}
}

// cancelOnWrite is a writer that calls cancel at its first write.
func cancelOnWrite(cancel context.CancelFunc) io.Writer {
	var once sync.Once
	return writerFunc(func(p []byte) (int, error) {
		once.Do(cancel)
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A trial holds its health server's address from the start: closed until
// the server came up, the port could become another trial's probe's source
// port, and the server could not listen (a run lost to it in CI).
func TestTrialHoldsItsAddress(t *testing.T) {
	spec := QuickSuite()
	tr, err := newTrial(t.Context(), spec, spec.Configs[0], 0, harness.ManyFlowsBuffers)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	if ln, err := net.Listen("tcp", tr.addr); err == nil {
		ln.Close()
		t.Fatalf("%s was free before the health server came up", tr.addr)
	}
}

// A probe target that goes quiet while the tunnel works (the far side
// drops ICMP) restarts nothing while the users' flows deliver: their data,
// acknowledged by the far end, passes the checks the light probe no longer
// can.
func testRunQuietTargetUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 12 s")
	}
	spec := shortSpec("quiet", 1, 12*time.Second, 256, nil, LoadSpec{Conns: 20, Ramp: D(time.Second)},
		ConfigSpec{Name: "evidence", Health: evidenceHealth(), Prober: evidenceProber(time.Second)})
	spec.Link.Drop = []DropWindow{{Kind: harness.DropICMP, Start: D(3 * time.Second)}}
	rep, err := Run(context.Background(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev := rep.Configs["evidence"]
	if ev.FalseRestarts != 0 || len(ev.Timeline.Restarts) != 0 {
		t.Errorf("restarts %v with the target quiet and the tunnel working", ev.Timeline.Restarts)
	}
	byDelivery := 0
	for _, c := range ev.Timeline.Checks {
		if c.At > 7 && c.Passed && c.DecidedBy == "delivery" {
			byDelivery++
		}
		if c.At > 7 && !c.Passed {
			t.Errorf("a check failed at %.1fs", float64(c.At))
		}
	}
	if byDelivery == 0 {
		t.Error("no check passed on delivery once the probe's target went quiet")
	}
}
