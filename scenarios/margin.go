package scenarios

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// A Margin says how close a configuration came to a false restart while
// the link worked, so that a run with none tells more than a count of
// zero: a prober restarts at FailureThreshold failed probes in a row, and
// a probe fails past its timeout.
type Margin struct {
	// MostFailedInARow is the longest run of failed probes while the link
	// worked; at FailureThreshold the prober restarts (Docker marks).
	MostFailedInARow int `json:"most_failed_in_a_row"`
	FailureThreshold int `json:"failure_threshold"`
	// SlowestPassMS is the slowest probe that passed while the link
	// worked; TimeoutMS the probe's timeout, past which it fails.
	SlowestPassMS float64 `json:"slowest_pass_ms"`
	TimeoutMS     float64 `json:"timeout_ms"`
	// LongestWithoutProofMS, for a configuration with evidence, is the
	// longest the link worked without an answer to the light probe, after
	// the first; at ToleranceMS (the evidence's window) a check fails.
	LongestWithoutProofMS float64 `json:"longest_without_proof_ms,omitempty"`
	ToleranceMS           float64 `json:"tolerance_ms,omitempty"`
}

// margin measures how close configuration cfg came to acting while the
// link worked (working): its prober on tl's probes, its evidence on the
// stretches without proof of life.
func margin(cfg ConfigSpec, tl Timeline, working workingTime) Margin {
	m := marginLimits(cfg)
	if cfg.Health.Evidence != nil {
		for _, g := range tl.ProofGaps {
			m.LongestWithoutProofMS = max(m.LongestWithoutProofMS, 1000*working.longestPiece(float64(g[0]), float64(g[1])))
		}
	}
	inARow := 0
	for _, pm := range tl.Probes {
		switch {
		case !working.holds(pm.At):
			inARow = 0 // an outage's failures are no false alarm
		case pm.Passed:
			inARow = 0
			m.SlowestPassMS = max(m.SlowestPassMS, pm.Latency)
		default:
			inARow++
			m.MostFailedInARow = max(m.MostFailedInARow, inARow)
		}
	}
	return m
}

// marginLimits is the part of a Margin that configuration cfg sets rather
// than measures: its prober's threshold and timeout, its evidence's window.
func marginLimits(cfg ConfigSpec) Margin {
	p := cfg.Prober
	m := Margin{FailureThreshold: cmp.Or(p.FailureThreshold, prober.DefaultKubeletFailureThreshold)}
	timeout := cmp.Or(p.Timeout.Duration, prober.DefaultKubeletTimeout)
	if p.Kind == "docker" {
		m.FailureThreshold = cmp.Or(p.FailureThreshold, prober.DefaultDockerRetries)
		timeout = cmp.Or(p.Timeout.Duration, prober.DefaultDockerTimeout)
	}
	m.TimeoutMS = float64(timeout.Milliseconds())
	if e := cfg.Health.Evidence; e != nil {
		m.ToleranceMS = float64(cmp.Or(e.Window.Duration, middleware.DefaultEvidenceWindow).Milliseconds())
	}
	return m
}

// WriteMarginTable writes a "Margins" section of Markdown: how close each
// of names came to a false restart (over what, says which), its Margin by
// margin(name).
func WriteMarginTable(b *strings.Builder, which string, names []string, margin func(string) Margin) {
	b.WriteString("\n## Margins\n\n" + which + ": its prober acts at the threshold of failed probes in a row, " +
		"a probe fails past its timeout, and evidence fails a check after its window without proof of life.\n\n" +
		"| configuration | failed probes in a row | slowest passing probe | longest without proof of life |\n| --- | --- | --- | --- |\n")
	for _, name := range names {
		m := margin(name)
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, m.InARow(), m.SlowestPass(), m.WithoutProof())
	}
}

// String reads m as a margin: "1 of 3 failures in a row, slowest pass 2.10s
// of 10.00s".
func (m Margin) String() string {
	return m.InARow() + " failures in a row, slowest pass " + m.SlowestPass()
}

// InARow is "1 of 3": the most failed probes in a row against the threshold.
func (m Margin) InARow() string {
	return fmt.Sprintf("%d of %d", m.MostFailedInARow, m.FailureThreshold)
}

// WithoutProof is "1.20s of 3.00s": the longest without proof of life
// against the evidence's window; "-" without evidence.
func (m Margin) WithoutProof() string {
	if m.ToleranceMS == 0 {
		return "-"
	}
	return fmtMS(m.LongestWithoutProofMS) + " of " + fmtMS(m.ToleranceMS)
}

// SlowestPass is "2.10s of 10.00s": the slowest pass against the timeout.
func (m Margin) SlowestPass() string { return fmtMS(m.SlowestPassMS) + " of " + fmtMS(m.TimeoutMS) }
