package scenarios

import (
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// The built-in suites compare four health configurations on the same loaded
// link, then through a real outage:
//
//   - reference: the reference health loop (2-10 s ladder, heal after 6 s,
//     then 5 s more each time) with the kubelet probing the status endpoint;
//   - probe-only: no loop; the kubelet probes /check/ with a long timeout and
//     failureThreshold 3;
//   - auto: the loop stands down while the kubelet probes /check/;
//   - wait: the loop on, the kubelet probing the status endpoint with ?wait=.
//
// Nothing is tuned per configuration beyond what its name says: all share
// the link, the load, the container and the kubelet's period and threshold.

// DefaultSuite is the comparison `tunnelprobe scenario` runs: about four
// minutes on 2 cores.
func DefaultSuite() Spec {
	return suite("default", 240*time.Second, 20*time.Second, 150*time.Second, 90*time.Second, 2000)
}

// QuickSuite is a shorter comparison for CI: under two minutes.
func QuickSuite() Spec {
	return suite("quick", 90*time.Second, 10*time.Second, 50*time.Second, 40*time.Second, 1000)
}

// referenceHealth is the reference health loop: a 2-10 s ladder, a 5 s
// period, unhealthy after one failure, and heal.
func referenceHealth() HealthSpec {
	return HealthSpec{
		Mode:             "loop",
		Period:           D(5 * time.Second),
		Timeouts:         middleware.Ladder{2 * time.Second, 4 * time.Second, 6 * time.Second, 8 * time.Second, 10 * time.Second},
		FailureThreshold: 1,
		Heal:             true,
	}
}

func suite(name string, total, ramp, outageAt, outageFor time.Duration, conns int) Spec {
	kubelet := func(endpoint string, timeout time.Duration) ProberSpec {
		return ProberSpec{
			Kind:             "kubelet",
			Endpoint:         endpoint,
			Period:           D(10 * time.Second),
			Timeout:          D(timeout),
			FailureThreshold: 3,
			// The first probes wait for the ramp, as a startup probe
			// would hold a real liveness probe back.
			InitialDelay: D(ramp),
		}
	}
	reference := referenceHealth()
	auto := reference
	auto.Mode = "auto"
	// The loop stands down while probes come at least once a period: the
	// period must cover the kubelet's.
	auto.Period = D(10 * time.Second)
	return Spec{
		Name:     name,
		Seed:     1,
		Duration: D(total),
		Link: LinkSpec{
			Rate:    "20mbit",
			Delay:   D(10 * time.Millisecond),
			Queue:   "256p",
			Outages: []Window{{Start: D(outageAt), Duration: D(outageFor)}},
		},
		Load:      LoadSpec{Conns: conns, Ramp: D(ramp)},
		Container: ContainerSpec{StartDelay: D(2 * time.Second)},
		Configs: []ConfigSpec{
			{Name: "reference", Health: reference, Prober: kubelet("/", time.Second)},
			// --timeout 9s, as in deploy/: the probe's own deadline, so that
			// a /check/ it cuts off is recorded as the tunnel's failure.
			{Name: "probe-only", Health: HealthSpec{Mode: "probe", Timeouts: middleware.Ladder{9 * time.Second}}, Prober: kubelet("/check/?timeout=9s", 10*time.Second)},
			{Name: "auto", Health: auto, Prober: kubelet("/check/?timeout=9s", 10*time.Second)},
			{Name: "wait", Health: reference, Prober: kubelet("/?wait=9s", 10*time.Second)},
		},
	}
}
