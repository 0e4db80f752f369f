package scenarios

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"

	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// Timeline is what happened in one trial, in offsets from the run's start.
type Timeline struct {
	// Probes are the orchestrator's probes.
	Probes []ProbeMark `json:"probes"`
	// Checks are the checks the health server executed (loop and /check/);
	// abandoned ones are left out.
	Checks []CheckMark `json:"checks"`
	// Restarts are the prober's restart decisions.
	Restarts []Offset `json:"restarts"`
	// Crashes are the VPN client's own exits (a killed openvpn), each
	// followed by a restart of the container: no prober's decision.
	Crashes []Offset `json:"crashes,omitempty"`
	// Heals are the health loop's heals.
	Heals []Offset `json:"heals"`
	// States are the health server's state changes.
	States []StateMark `json:"states"`
	// Notes are other events, for reading the report.
	Notes []NoteMark `json:"notes,omitempty"`
	// ProofGaps are the stretches of more than ProofGapMin without an
	// answer to the health server's light probe (proof of life), from an
	// answer to the next, the last one to the end of the run: what a
	// window of evidence must tolerate.
	ProofGaps [][2]Offset `json:"proof_gaps,omitempty"`
}

// ProofGapMin is the shortest stretch without proof of life that a
// timeline records: four light probes' worth at the default cadence.
const ProofGapMin = time.Second

// Offset is a time since the run's start, in seconds.
type Offset float64

// ProbeMark is one probe: when it started, how long it took, whether it
// passed, and for a failed one what it got.
type ProbeMark struct {
	At      Offset  `json:"at"`
	Latency float64 `json:"latency_ms"`
	Passed  bool    `json:"passed"`
	// Reason is a failed probe's status and error ("503", "dial tcp ...:
	// i/o timeout"), cut to maxReason bytes.
	Reason string `json:"reason,omitempty"`
}

// maxReason bounds ProbeMark.Reason.
const maxReason = 120

// CheckMark is one executed check of the health server.
type CheckMark struct {
	At      Offset  `json:"at"`
	Latency float64 `json:"latency_ms"`
	Passed  bool    `json:"passed"`
	Source  string  `json:"source"`
	// DecidedBy is what decided the check (middleware.Result.DecidedBy):
	// a proof of life with no dial ("light-probe", "delivery", "counters",
	// "full-check"), or "active" for a check that ran.
	DecidedBy string `json:"decided_by,omitempty"`
}

// StateMark is a change of the health server's state.
type StateMark struct {
	At Offset `json:"at"`
	To string `json:"to"`
}

// NoteMark is a free-text event.
type NoteMark struct {
	At   Offset `json:"at"`
	Text string `json:"text"`
}

// recorder collects a trial's timeline from the prober's callbacks and the
// health server's observer, which run on several goroutines.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	tl    Timeline
	// lastAnswer is when the light probe was last answered; answered
	// whether it ever was.
	lastAnswer Offset
	answered   bool
}

func newRecorder(start time.Time) *recorder { return &recorder{start: start} }

func (r *recorder) at(t time.Time) Offset { return Offset(t.Sub(r.start).Seconds()) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (r *recorder) probe(p prober.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := ProbeMark{At: r.at(p.Start), Latency: ms(p.Duration), Passed: p.Outcome.Passed()}
	if !m.Passed {
		m.Reason = probeReason(p)
	}
	r.tl.Probes = append(r.tl.Probes, m)
}

// probeReason says what a failed probe got: its status and the first line
// of its body, if any, and its error.
func probeReason(p prober.Result) string {
	var parts []string
	if p.Code != 0 {
		parts = append(parts, strconv.Itoa(p.Code))
	}
	if line, _, _ := strings.Cut(strings.TrimSpace(p.Body), "\n"); line != "" {
		parts = append(parts, line)
	}
	if p.Err != nil {
		parts = append(parts, p.Err.Error())
	}
	s := strings.Join(parts, ": ")
	if len(s) > maxReason {
		s = s[:maxReason]
	}
	return s
}

func (r *recorder) decision(d prober.Decision) {
	if d.Kind != prober.DecisionRestart {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tl.Restarts = append(r.tl.Restarts, r.at(d.Time))
}

func (r *recorder) crash(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tl.Crashes = append(r.tl.Crashes, r.at(at))
}

func (r *recorder) note(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tl.Notes = append(r.tl.Notes, NoteMark{At: r.at(time.Now()), Text: text})
}

// observer returns the health server's observer feeding r.
func (r *recorder) observer() middleware.Observer {
	return middleware.ObserverFuncs{
		OnCheckFinished: func(res middleware.Result) {
			if res.Abandoned || res.Source == middleware.SourceFull {
				// The full check answers no probe: its latency is not a
				// probe's wait (what it decides shows in the checks after).
				return
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.tl.Checks = append(r.tl.Checks, CheckMark{
				At: r.at(res.Start), Latency: ms(res.Duration), Passed: res.Passed(), Source: res.Source.String(),
				DecidedBy: res.DecidedBy(),
			})
		},
		OnStateChanged: func(_, to middleware.Snapshot) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.tl.States = append(r.tl.States, StateMark{At: r.at(to.Since), To: to.Status.String()})
		},
		OnHealed: func(e middleware.HealEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.tl.Heals = append(r.tl.Heals, r.at(e.Time))
		},
		OnLightProbe: func(p middleware.LightProbeResult) {
			if p.Err != nil {
				return
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			at := r.at(p.Sent.Add(p.RTT))
			if r.answered && float64(at-r.lastAnswer) > ProofGapMin.Seconds() {
				r.tl.ProofGaps = append(r.tl.ProofGaps, [2]Offset{r.lastAnswer, at})
			}
			r.lastAnswer, r.answered = max(r.lastAnswer, at), true
		},
	}
}

// timeline returns a copy of what was recorded.
func (r *recorder) timeline() Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	tl := r.tl
	tl.Probes = append([]ProbeMark(nil), tl.Probes...)
	tl.Checks = append([]CheckMark(nil), tl.Checks...)
	tl.Restarts = append([]Offset(nil), tl.Restarts...)
	tl.Crashes = append([]Offset(nil), tl.Crashes...)
	tl.Heals = append([]Offset(nil), tl.Heals...)
	tl.States = append([]StateMark(nil), tl.States...)
	tl.Notes = append([]NoteMark(nil), tl.Notes...)
	tl.ProofGaps = append([][2]Offset(nil), tl.ProofGaps...)
	if now := r.at(time.Now()); r.answered && float64(now-r.lastAnswer) > ProofGapMin.Seconds() {
		tl.ProofGaps = append(tl.ProofGaps, [2]Offset{r.lastAnswer, now}) // no answer since
	}
	return tl
}
