package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware"

	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// How the container suite judges a run, as docs/containers.md states it:
// first whether the machine let the run be judged at all (starvation), then
// each configuration by the rules of ctrRules, each rule in one function.

// What holds a machine too long for a run to judge the health servers by.
const (
	// faultLate: Docker put a fault in place this long after its time.
	// Every configuration is timed from when it was in place, but a Docker
	// that slow starves the containers too.
	faultLate = 5 * time.Second
	// stallLimit: this process, the kubelets', could not run this long.
	// Evidence acts about 5 s after a fault is in place (its window, then
	// its kubelet's second failed probe a second apart), half its 10 s
	// bound; a hold of this process this long could take the rest.
	stallLimit = 3 * time.Second
	// probeOverrun: a probe ended this long after its timeout, which its
	// client enforces: the prober, or the path to the pod, was held.
	probeOverrun = time.Second
	// stopOverrun: a kubelet's stop of a VPN container took this long
	// over its grace period.
	stopOverrun = 5 * time.Second
)

// starvation returns what held the machine during a run, one line each, or
// nil when the run can be judged: faults Docker put in place late, this
// process (the kubelets) held, probes that outran their timeouts, stops that
// outran their grace, and loads that could not fill their links (those of
// configurations that broke no connection by a false action).
func starvation(envs []*ctrEnv, reps []*Report, stall time.Duration) []string {
	var why []string
	if stall >= stallLimit {
		why = append(why, fmt.Sprintf("this process (the kubelets) could not run for up to %.1f s", stall.Seconds()))
	}
	late := map[string]time.Duration{} // each fault's latest to be in place
	for i, e := range envs {
		for _, l := range e.labs {
			applied, _ := l.faultTimes()
			for f, o := range e.spec.Link.Outages {
				if f < len(applied) {
					late[faults[f].name] = max(late[faults[f].name], applied[f]-o.Start.Duration)
				}
			}
			c := reps[i].Configs[l.cfg.Name]
			why = append(why, heldProbes(e.kind()+" "+l.cfg.Name, l.cfg.Prober, c.Timeline.Probes)...)
			l.vpn.mu.Lock()
			for _, s := range l.vpn.stops {
				if s > l.vpn.grace+stopOverrun {
					why = append(why, fmt.Sprintf("%s: Docker took %.1f s to stop the VPN container (grace %v)", l.alias("vpn"), s.Seconds(), l.vpn.grace))
				}
			}
			l.vpn.mu.Unlock()
			switch aim := reps[i].loadAim(); {
			case c.FalseRestarts != 0 || c.FalseHeals != 0:
				// its own false actions broke its load
			case c.Utilisation == nil:
				why = append(why, fmt.Sprintf("%s %s: its link's counters could not be read: the load was not measured", e.kind(), l.cfg.Name))
			case *c.Utilisation < aim:
				why = append(why, fmt.Sprintf("%s %s: the load reached %s of the link's rate, against an aim of %.0f%%",
					e.kind(), l.cfg.Name, fmtShare(c.Utilisation), 100*aim))
			}
		}
	}
	for _, what := range slices.Sorted(maps.Keys(late)) {
		if late[what] > faultLate {
			why = append(why, fmt.Sprintf("Docker had fault %s in place %.1f s late", what, late[what].Seconds()))
		}
	}
	return why
}

// heldProbes says in one line how many probes of a prober p outran their
// timeout by probeOverrun, and the longest; nothing when none did.
func heldProbes(name string, p ProberSpec, probes []ProbeMark) []string {
	timeout := p.Timeout.Duration
	if timeout == 0 {
		timeout = prober.DefaultKubeletTimeout
		if p.Kind == "docker" {
			timeout = prober.DefaultDockerTimeout
		}
	}
	var longest float64
	n := 0
	for _, pr := range probes {
		if d := time.Duration(pr.Latency * float64(time.Millisecond)); d > timeout+probeOverrun {
			n++
			longest = max(longest, pr.Latency/1000)
		}
	}
	if n == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: %d probes outran their %v timeout, the longest taking %.1f s", name, n, timeout, longest)}
}

// judgement is what a configuration's run is judged on: its spec with its
// faults where Docker had them in place, its figures, and what Docker says
// of its containers.
type judgement struct {
	cfg  ConfigSpec
	spec Spec // its outages where its faults were in place
	c    ConfigReport
	// What its VPN container's restarts made: the lives they began and
	// the distinct devices its starts made (one each, the first start's
	// included).
	lives   []life
	devices int
	// When its VPN container was down: each restart's stop to its start
	// serving again (to zero: down at the end).
	downs []life
	// Whether the health sidecar ran through the run, and since when.
	sidecarRunning bool
	sidecarStarted time.Time
	started        time.Time // the run's start
}

// judgement gathers what l's configuration is judged on.
func (l *ctrLab) judgement(ctx context.Context, rep *Report) (judgement, error) {
	spec, _ := l.inPlace(rep.Spec)
	j := judgement{cfg: l.cfg, spec: spec, c: rep.Configs[l.cfg.Name], started: rep.Started, devices: len(l.vpnLog.ifindexes())}
	l.vpn.mu.Lock()
	j.lives = slices.Clone(l.vpn.lives)
	j.downs = slices.Clone(l.vpn.downs)
	l.vpn.mu.Unlock()
	st, err := l.sidecar.State(ctx)
	if err != nil {
		return j, fmt.Errorf("the health sidecar's state: %w", err)
	}
	j.sidecarRunning = st.Running
	j.sidecarStarted, _ = time.Parse(time.RFC3339Nano, st.StartedAt)
	return j, nil
}

// ctrRules are the rules of docs/containers.md, in its order. A rule
// returns what broke it, and notes for the log (an outage missed where
// missing it is the result).
var ctrRules = []struct {
	name    string
	applies func(cfg string) bool
	check   func(j judgement) (broken, notes []string)
}{
	{"acts on every fault", all, actsOnEveryFault},
	{"evidence: nothing while the link works, every fault within 10 s", only("evidence"), evidenceBound},
	{"nothing between faults", only("evidence", "compose"), quietBetweenFaults},
	{"a heal brings the tunnel back", only("compose"), healsRestore},
	{"the sidecar follows every VPN container", all, sidecarFollows},
	{"the load crosses the tunnel", all, loadCrosses},
}

func all(string) bool { return true }

func only(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// judge fails t for every rule j's configuration broke.
func (j judgement) judge(t *testing.T) {
	t.Helper()
	for _, r := range ctrRules {
		if !r.applies(j.cfg.Name) {
			continue
		}
		broken, notes := r.check(j)
		for _, n := range notes {
			t.Logf("%s: %s", j.cfg.Name, n)
		}
		for _, b := range broken {
			t.Errorf("%s: %s: %s", j.cfg.Name, r.name, b)
		}
	}
}

// evidenceDetects is the bound the README claims for the evidence
// configuration: every fault acted on within it, from when Docker had the
// fault in place.
const evidenceDetects = 10 * time.Second

// recovery is how long after a fault is undone a restart or heal is still
// put down to it: a probe or heal that began in the fault.
const recovery = evidenceDetects

// actsOnEveryFault: a restart or heal inside every fault's window, from
// when it was in place to when it was undone. A miss is the result where
// the configuration cannot act (a tcpSocket probe passes while the health
// server listens; a schedule longer than the fault), and it follows from a
// restart or heal of the working tunnel since the previous fault, which
// can leave the VPN container stopping or in its back-off for the whole
// fault, and from a container still down when the fault came after false
// restarts lengthened its crash back-off past the gap between faults: the
// report counts those false actions.
func actsOnEveryFault(j judgement) (broken, notes []string) {
	prevEnd := 0.0
	for i, o := range j.c.Outages {
		busy := slices.ContainsFunc(slices.Concat(j.c.Timeline.Restarts, j.c.Timeline.Heals), func(a Offset) bool {
			return float64(a) >= prevEnd && float64(a) < o.Start
		})
		prevEnd = o.End
		if o.Detected {
			continue
		}
		what := fmt.Sprintf("fault %d (%s, in place %.1f-%.1f s)", i+1, faults[i].name, o.Start, o.End)
		switch {
		case o.TooShort:
			notes = append(notes, "missed "+what+", as expected: its schedule needs longer than the fault")
		case j.cfg.Prober.Handler == handlerTCPSocket:
			notes = append(notes, "missed "+what+", as expected: a tcpSocket probe passes while the health server listens")
		case busy:
			notes = append(notes, "missed "+what+": it had restarted or healed the working tunnel since the fault before, which the report counts")
		case j.c.FalseRestarts+j.c.FalseHeals > 0 && j.downAt(o.Start):
			notes = append(notes, "missed "+what+": its VPN container was still down when the fault came, in a crash back-off that its false restarts had lengthened, which the report counts")
		default:
			broken = append(broken, "no restart or heal in "+what+"; "+inWindow(j.c.Timeline, o))
		}
	}
	return broken, notes
}

// downAt reports whether the VPN container was down (stopping, in its
// crash back-off, starting) at, in seconds from the run's start.
func (j judgement) downAt(at float64) bool {
	t := j.started.Add(time.Duration(at * float64(time.Second)))
	return slices.ContainsFunc(j.downs, func(d life) bool { return !t.Before(d.from) && (d.to.IsZero() || t.Before(d.to)) })
}

// evidenceBound: nothing restarted or healed while the link worked, and
// every fault acted on within evidenceDetects of its being in place.
func evidenceBound(j judgement) (broken, notes []string) {
	if j.c.FalseRestarts != 0 || j.c.FalseHeals != 0 {
		broken = append(broken, fmt.Sprintf("restarted the working tunnel %d times and healed it %d times, want none", j.c.FalseRestarts, j.c.FalseHeals))
	}
	for i, o := range j.c.Outages {
		if o.DetectionSeconds == nil {
			continue // a miss: actsOnEveryFault's
		}
		notes = append(notes, fmt.Sprintf("fault %d (%s) acted on %.1f s after it was in place", i+1, faults[i].name, *o.DetectionSeconds))
		if *o.DetectionSeconds > evidenceDetects.Seconds() {
			broken = append(broken, fmt.Sprintf("took %.1f s to act on fault %d (%s), over %v", *o.DetectionSeconds, i+1, faults[i].name, evidenceDetects))
		}
	}
	return broken, notes
}

// quietBetweenFaults: nothing restarted or healed between faults either,
// from recovery after one was undone to the next one (or the end): the
// report's false actions count only the loaded phase before the first.
func quietBetweenFaults(j judgement) (broken, notes []string) {
	for _, a := range slices.Concat(j.c.Timeline.Restarts, j.c.Timeline.Heals) {
		for i := range j.spec.Link.Outages {
			end, next := afterFault(j.spec, i)
			if at := float64(a); at >= end+recovery.Seconds() && at < next {
				broken = append(broken, fmt.Sprintf("restarted or healed the working tunnel at %.1f s, between fault %d and the next", at, i+1))
			}
		}
	}
	return broken, nil
}

// healsRestore: after every fault the tunnel was back, a check passed on
// the light probe's answer before the next fault (or the end). A heal that
// stopped the VPN and could not run it again (a wrong API key, a misspelt
// request) breaks it.
func healsRestore(j judgement) (broken, notes []string) {
	for i := range j.spec.Link.Outages {
		from, until := afterFault(j.spec, i)
		if !slices.ContainsFunc(j.c.Timeline.Checks, func(m CheckMark) bool {
			return float64(m.At) >= from && float64(m.At) < until && m.Passed && m.DecidedBy == middleware.ProofLightProbe
		}) {
			broken = append(broken, fmt.Sprintf("the tunnel was not back after fault %d (%s): no check passed on proof of life from %.0f s to %.0f s",
				i+1, faults[i].name, from, until))
		}
	}
	return broken, nil
}

// afterFault returns, in seconds from the start, when fault i ends and
// when the next begins (or the run ends).
func afterFault(spec Spec, i int) (end, next float64) {
	outages := spec.Link.Outages
	end, next = outages[i].End().Seconds(), spec.Duration.Seconds()
	if i+1 < len(outages) {
		next = outages[i+1].Start.Seconds()
	}
	return end, next
}

// sidecarFollows: the health sidecar ran on through every restart of the
// VPN container, each start of which made a new device (a distinct
// ifindex); and with evidence, each incarnation of the VPN that lived
// through a stretch of working link at least evidenceDetects long had a
// check passed on the light probe's answers through its device.
func sidecarFollows(j judgement) (broken, notes []string) {
	if !j.sidecarRunning || !j.sidecarStarted.Before(j.started) {
		broken = append(broken, fmt.Sprintf("the health sidecar did not run on through the VPN's restarts: running %v, started %s, the run at %s",
			j.sidecarRunning, j.sidecarStarted.Format(time.RFC3339Nano), j.started.Format(time.RFC3339Nano)))
	}
	if j.devices != len(j.lives)+1 {
		broken = append(broken, fmt.Sprintf("%d starts of the VPN container made %d distinct devices, want one each", len(j.lives)+1, j.devices))
	}
	if j.cfg.Health.Evidence == nil {
		return broken, nil // its checks dial by the kernel's routes, which follow by themselves
	}
	end := j.started.Add(j.spec.Duration.Duration)
	at := func(t time.Time) Offset { return Offset(t.Sub(j.started).Seconds()) }
	for i, life := range j.lives {
		to := life.to
		if to.IsZero() || to.After(end) {
			to = end
		}
		from, until := at(life.from), at(to)
		if workingStretch(j.spec, float64(from), float64(until)) < evidenceDetects.Seconds() {
			continue
		}
		if !slices.ContainsFunc(j.c.Timeline.Checks, func(c CheckMark) bool {
			return c.At > from && c.At < until && c.Passed && c.DecidedBy == middleware.ProofLightProbe
		}) {
			broken = append(broken, fmt.Sprintf("the VPN's incarnation %d (%.0f-%.0f s) lived through working link, and no check passed on proof of life: the sidecar did not follow its device",
				i+2, from, until))
		}
	}
	return broken, nil
}

// workingStretch returns the longest stretch of [from, to) outside the
// spec's outages, in seconds.
func workingStretch(spec Spec, from, to float64) float64 {
	longest, at := 0.0, from
	for _, o := range spec.Link.Outages {
		start, end := o.Start.Seconds(), o.End().Seconds()
		if end <= at || start >= to {
			continue
		}
		longest = max(longest, min(start, to)-at)
		at = max(at, end)
	}
	return max(longest, to-at)
}

// loadCrosses: the load opened its connections through the tunnel.
func loadCrosses(j judgement) (broken, notes []string) {
	if j.c.ConnsAchieved == 0 {
		broken = append(broken, fmt.Sprintf("the load opened no connection through the tunnel (%s)", cmp.Or(j.c.LoadError, "no error")))
	}
	return broken, nil
}

// inWindow sums up what the prober and the health server saw in outage o:
// the probes passed and failed, the slowest and what the last failed one
// got, and the checks passed and failed by what decided them.
func inWindow(tl Timeline, o OutageReport) string {
	in := func(at Offset) bool { return float64(at) >= o.Start && float64(at) < o.End }
	passed, failed, slowest, reason := 0, 0, 0.0, ""
	for _, p := range tl.Probes {
		if !in(p.At) {
			continue
		}
		if p.Passed {
			passed++
		} else {
			failed++
			reason = p.Reason
		}
		slowest = max(slowest, p.Latency)
	}
	checks := map[string]int{}
	for _, c := range tl.Checks {
		if !in(c.At) {
			continue
		}
		outcome := "failed"
		if c.Passed {
			outcome = "passed"
		}
		checks[cmp.Or(c.DecidedBy, "active")+" "+outcome]++
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(checks)) {
		parts = append(parts, fmt.Sprintf("%d %s", checks[k], k))
	}
	s := fmt.Sprintf("in the window: probes %d passed, %d failed, the slowest %.1f s", passed, failed, slowest/1000)
	if reason != "" {
		s += fmt.Sprintf(" (the last failed: %q)", reason)
	}
	return s + "; checks " + cmp.Or(strings.Join(parts, ", "), "none")
}

// Each rule of the container suite breaks on what docs/containers.md says
// it breaks on, and holds otherwise: judged without containers.
func TestContainerRules(t *testing.T) {
	spec := containerSuite()
	started := time.Unix(1000, 0)
	at := func(s float64) time.Time { return started.Add(time.Duration(s * float64(time.Second))) }
	detected := func(d float64) func(*judgement) {
		return func(j *judgement) {
			for i := range j.c.Outages {
				j.c.Outages[i].Detected, j.c.Outages[i].DetectionSeconds = true, &d
			}
		}
	}
	// passes lays a check passed on the light probe every 5 s from 0 to the end.
	passes := func(j *judgement) {
		for s := 0.0; s < spec.Duration.Seconds(); s += 5 {
			j.c.Timeline.Checks = append(j.c.Timeline.Checks, CheckMark{At: Offset(s), Passed: true, DecidedBy: middleware.ProofLightProbe})
		}
	}
	for _, tc := range []struct {
		name   string
		cfg    string
		change func(*judgement)
		broken string // in what broke; "" for none
	}{
		{"every fault met", "evidence", detected(4), ""},
		{"a fault missed", "evidence", func(j *judgement) {
			detected(4)(j)
			j.c.Outages[1].Detected, j.c.Outages[1].DetectionSeconds = false, nil
		},
			"acts on every fault: no restart or heal in fault 2 (stop, in place 110.0-140.0 s)"},
		{"a miss after a false restart", "evidence", func(j *judgement) {
			detected(4)(j)
			j.c.Outages[1].Detected, j.c.Outages[1].DetectionSeconds = false, nil
			j.c.Timeline.Restarts = append(j.c.Timeline.Restarts, 100)
		}, "between fault 1 and the next"}, // no miss: quietBetweenFaults' instead
		{"a tcpSocket probe misses them all", "tcp-socket", func(j *judgement) {}, ""},
		{"a miss in a back-off that false restarts lengthened", "probe-only", func(j *judgement) {
			detected(4)(j)
			j.c.Outages[3].Detected, j.c.Outages[3].DetectionSeconds = false, nil
			j.c.FalseRestarts = 2
			j.downs = []life{{from: at(200), to: at(285)}} // a fault 3 restart's 80 s back-off
		}, ""},
		{"a miss in a back-off with no false restart", "probe-only", func(j *judgement) {
			detected(4)(j)
			j.c.Outages[3].Detected, j.c.Outages[3].DetectionSeconds = false, nil
			j.downs = []life{{from: at(200), to: at(285)}}
		}, "acts on every fault: no restart or heal in fault 4"},
		{"evidence restarts the working tunnel", "evidence", func(j *judgement) { detected(4)(j); j.c.FalseRestarts = 1 },
			"restarted the working tunnel 1 times"},
		{"evidence slow", "evidence", detected(11), "took 11.0 s to act on fault 1 (pause), over 10s"},
		{"compose heals between faults", "compose", func(j *judgement) { detected(4)(j); passes(j); j.c.Timeline.Heals = []Offset{100} },
			"nothing between faults: restarted or healed the working tunnel at 100.0 s, between fault 1"},
		{"a heal within recovery of the fault", "compose", func(j *judgement) { detected(4)(j); passes(j); j.c.Timeline.Heals = []Offset{75} }, ""},
		{"compose's tunnel never back", "compose", detected(4), "the tunnel was not back after fault 1 (pause)"},
		{"the sidecar restarted", "probe-only", func(j *judgement) { detected(4)(j); j.sidecarStarted = at(3) },
			"the health sidecar did not run on through"},
		{"one device for two starts", "probe-only", func(j *judgement) { detected(4)(j); j.lives = []life{{from: at(60)}} },
			"2 starts of the VPN container made 1 distinct devices"},
		{"evidence never proves a new device", "evidence", func(j *judgement) {
			detected(4)(j)
			j.lives, j.devices = []life{{from: at(80), to: at(130)}}, 2
		}, "the VPN's incarnation 2 (80-130 s) lived through working link"},
		{"evidence proves each new device", "evidence", func(j *judgement) {
			detected(4)(j)
			passes(j)
			j.lives, j.devices = []life{{from: at(80), to: at(130)}}, 2
		}, ""},
		{"no load through the tunnel", "probe-only", func(j *judgement) { detected(4)(j); j.c.ConnsAchieved = 0; j.c.LoadError = "dial: no route" },
			"the load opened no connection through the tunnel (dial: no route)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := slices.IndexFunc(spec.Configs, func(c ConfigSpec) bool { return c.Name == tc.cfg })
			j := judgement{cfg: spec.Configs[i], spec: spec, started: started, sidecarRunning: true, sidecarStarted: at(-30), devices: 1}
			j.c = measure(spec, j.cfg, Timeline{}, loadgen.Result{ConnsAchieved: 100}, started, window{})
			tc.change(&j)
			var broken []string
			for _, r := range ctrRules {
				if r.applies(j.cfg.Name) {
					b, _ := r.check(j)
					for _, s := range b {
						broken = append(broken, r.name+": "+s)
					}
				}
			}
			// What broke is tc.broken, and nothing of another rule.
			all := strings.Join(broken, "\n")
			at := slices.IndexFunc(broken, func(b string) bool { return tc.broken != "" && strings.Contains(b, tc.broken) })
			switch {
			case tc.broken == "" && len(broken) > 0:
				t.Errorf("broken: %s; want nothing", all)
			case tc.broken != "" && at < 0:
				t.Errorf("broken: %q; want %q among it", all, tc.broken)
			case at >= 0:
				rule, _, _ := strings.Cut(broken[at], ": ")
				for _, b := range broken {
					if !strings.HasPrefix(b, rule+": ") {
						t.Errorf("also broken: %q; want only rule %q", b, rule)
					}
				}
			}
		})
	}
}

// A run the machine held is said to be too starved to judge, naming what
// held it; a run the machine let be is judged.
func TestStarvation(t *testing.T) {
	spec := openvpnContainerSuite()
	share := func(v float64) *float64 { return &v }
	run := func(change func(e *ctrEnv, rep *Report)) []string {
		e := &ctrEnv{spec: spec}
		rep := &Report{Spec: spec, Configs: map[string]ConfigReport{}}
		for i, c := range spec.Configs {
			l := &ctrLab{env: e, cfg: c, index: i, prefix: "ovpn-", vpn: &vpnContainer{grace: prober.MinGracePeriod}}
			for _, o := range spec.Link.Outages {
				l.applied = append(l.applied, o.Start.Duration+time.Second)
				l.undone = append(l.undone, o.End()+time.Second)
			}
			e.labs = append(e.labs, l)
			rep.Configs[c.Name] = ConfigReport{Utilisation: share(0.9), Timeline: Timeline{Probes: []ProbeMark{{At: 20, Latency: 30, Passed: true}}}}
		}
		if change != nil {
			change(e, rep)
		}
		return starvation([]*ctrEnv{e}, []*Report{rep}, 0)
	}
	if why := run(nil); len(why) != 0 {
		t.Fatalf("a run the machine let be: %q, want it judged", why)
	}
	for _, tc := range []struct {
		name   string
		change func(e *ctrEnv, rep *Report)
		want   string
	}{
		{"a fault in place late", func(e *ctrEnv, _ *Report) { e.labs[1].applied[0] += 5 * time.Second },
			"Docker had fault pause in place 6.0 s late"},
		{"a probe held", func(e *ctrEnv, rep *Report) {
			c := rep.Configs["evidence"]
			c.Timeline.Probes = append(c.Timeline.Probes, ProbeMark{At: 30, Latency: 11500})
			rep.Configs["evidence"] = c
		}, "openvpn evidence: 1 probes outran their 10s timeout, the longest taking 11.5 s"},
		{"a stop held", func(e *ctrEnv, _ *Report) { e.labs[2].vpn.stops = []time.Duration{9 * time.Second} },
			"vpn-ovpn-compose: Docker took 9.0 s to stop the VPN container"},
		{"a load that did not fill its link", func(_ *ctrEnv, rep *Report) {
			c := rep.Configs["probe-only"]
			c.Utilisation = share(0.5)
			rep.Configs["probe-only"] = c
		}, "openvpn probe-only: the load reached 50% of the link's rate, against an aim of 80%"},
		{"a load not measured", func(_ *ctrEnv, rep *Report) {
			c := rep.Configs["compose"]
			c.Utilisation = nil
			rep.Configs["compose"] = c
		}, "openvpn compose: its link's counters could not be read: the load was not measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := run(tc.change)
			if !slices.ContainsFunc(why, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("starvation %q, want %q among it", why, tc.want)
			}
		})
	}
	// A load its configuration broke by a false action says nothing of the
	// machine; a stall of this process does.
	if why := run(func(_ *ctrEnv, rep *Report) {
		c := rep.Configs["probe-only"]
		c.Utilisation, c.FalseRestarts = share(0.3), 1
		rep.Configs["probe-only"] = c
	}); len(why) != 0 {
		t.Errorf("a load broken by a false restart: %q, want the run judged", why)
	}
	e := &ctrEnv{spec: spec}
	if why := starvation([]*ctrEnv{e}, []*Report{{Spec: spec}}, 3500*time.Millisecond); len(why) != 1 || !strings.Contains(why[0], "could not run for up to 3.5 s") {
		t.Errorf("a stall of 3.5 s: %q", why)
	}
	if why := starvation([]*ctrEnv{e}, []*Report{{Spec: spec}}, 2500*time.Millisecond); len(why) != 0 {
		t.Errorf("a stall of 2.5 s: %q, want the run judged", why)
	}
}
