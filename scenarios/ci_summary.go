package scenarios

import (
	"fmt"
	"io"
	"strings"
)

// WriteCISummary writes runs as Markdown fit for a CI job's summary (such
// as GitHub's $GITHUB_STEP_SUMMARY): whether every bound held, counting
// apart the configurations without bounds (not judged, never passed), then
// a row per run and configuration with its result and figures, then each
// broken bound.
func WriteCISummary(w io.Writer, runs []CIRun) error {
	var rows strings.Builder
	var broken []string
	var n ciCounts
	for _, run := range runs {
		r := run.Report
		if r.Interrupted {
			n.interrupted++
		}
		for _, cb := range r.Breaches() {
			broken = append(broken, fmt.Sprintf("- **%s**, %s: %s", run.Name, cb.Config, cb.Breach))
		}
		for _, name := range r.Order {
			c := r.Configs[name]
			fmt.Fprintf(&rows, "| %s | %s | %s | %s |\n", cell(run.Name), cell(name), cell(n.add(r, name, c)), figures(c))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## tunnelprobe scenario: %s\n\n", n.headline(len(broken), len(runs)))
	b.WriteString("| run | configuration | result | figures |\n| --- | --- | --- | --- |\n")
	b.WriteString(rows.String())
	if len(broken) > 0 {
		b.WriteString("\nBroken bounds:\n\n" + strings.Join(broken, "\n") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ciCounts are the configurations of the runs by their result, and the
// runs interrupted.
type ciCounts struct{ held, broke, failed, notJudged, interrupted int }

// add counts configuration name of r, which measured c, and returns its
// result.
func (n *ciCounts) add(r *Report, name string, c ConfigReport) string {
	switch {
	case c.Failed != "":
		n.failed++
		return "failed: " + c.Failed
	case len(c.Breaches) > 0:
		n.broke++
		return fmt.Sprintf("**%d bound(s) broken**", len(c.Breaches))
	case r.Interrupted:
		return "interrupted"
	case !r.bounded(name):
		n.notJudged++
		return "not judged (no expect: bounds)"
	}
	n.held++
	return "pass"
}

// headline is the summary's title: what broke or failed, or whether every
// bound held, and how many configurations were not judged.
func (n ciCounts) headline(broken, runs int) string {
	var head string
	switch {
	case broken > 0 || n.failed > 0:
		head = fmt.Sprintf("%d bound(s) broken, %d configuration(s) failed", broken, n.failed)
	case n.interrupted > 0:
		head = fmt.Sprintf("bounds not judged in %d interrupted run(s); none broken in the others", n.interrupted)
	case n.held == 0:
		return fmt.Sprintf("%d run(s), nothing judged: %d configuration(s) without expect: bounds", runs, n.notJudged)
	default:
		head = fmt.Sprintf("every bound held (%d configuration(s) judged in %d run(s))", n.held, runs)
	}
	if n.notJudged > 0 {
		head += fmt.Sprintf("; %d configuration(s) not judged (no expect: bounds)", n.notJudged)
	}
	return head
}

// cell is s fit for a Markdown table cell: no pipe, no line break.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(s)
}
