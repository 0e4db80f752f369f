package scenarios

import (
	"fmt"
	"io"
	"strings"
)

// WriteCISummary writes runs as Markdown fit for a CI job's summary (such
// as GitHub's $GITHUB_STEP_SUMMARY): whether every bound held, then a row
// per run and configuration with its result and figures, then each broken
// bound.
func WriteCISummary(w io.Writer, runs []CIRun) error {
	var b strings.Builder
	var broken []string
	failed, bounded, unjudged := 0, 0, 0
	for _, run := range runs {
		if run.Report.Interrupted {
			unjudged++
		}
		for _, cb := range run.Report.Breaches() {
			broken = append(broken, fmt.Sprintf("- **%s**, %s: %s", run.Name, cb.Config, cb.Breach))
		}
		failed += len(run.Report.Failures())
		for _, c := range run.Report.Spec.Configs {
			if c.Expect != nil {
				bounded++
			}
		}
	}
	switch {
	case len(broken) > 0 || failed > 0:
		fmt.Fprintf(&b, "## tunnelprobe scenario: %d bound(s) broken, %d configuration(s) failed\n\n", len(broken), failed)
	case bounded == 0:
		fmt.Fprintf(&b, "## tunnelprobe scenario: %d run(s), no bounds set\n\n", len(runs))
	case unjudged > 0:
		fmt.Fprintf(&b, "## tunnelprobe scenario: bounds not judged in %d interrupted run(s); none broken in the others\n\n", unjudged)
	default:
		fmt.Fprintf(&b, "## tunnelprobe scenario: every bound held (%d run(s))\n\n", len(runs))
	}
	b.WriteString("| run | configuration | result | figures |\n| --- | --- | --- | --- |\n")
	for _, run := range runs {
		r := run.Report
		for _, name := range r.Order {
			c := r.Configs[name]
			result := "pass"
			switch {
			case c.Failed != "":
				result = "failed: " + c.Failed
			case len(c.Breaches) > 0:
				result = fmt.Sprintf("**%d bound(s) broken**", len(c.Breaches))
			case r.Interrupted:
				result = "interrupted"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(run.Name), cell(name), cell(result), figures(c))
		}
	}
	if len(broken) > 0 {
		b.WriteString("\nBroken bounds:\n\n" + strings.Join(broken, "\n") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell is s fit for a Markdown table cell: no pipe, no line break.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "\r", " ").Replace(s)
}
