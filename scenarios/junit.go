package scenarios

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// A CIRun is one run to report to a CI system: its name there (the suite
// or condition, and the seed) and its report.
type CIRun struct {
	Name   string
	Report *Report
}

// The JUnit XML elements, as CI systems read them: testsuites, a testsuite
// per run, a testcase per configuration.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name      string      `xml:"name,attr"`
		Tests     int         `xml:"tests,attr"`
		Failures  int         `xml:"failures,attr"`
		Errors    int         `xml:"errors,attr"`
		Skipped   int         `xml:"skipped,attr"`
		Time      float64     `xml:"time,attr"`
		Timestamp string      `xml:"timestamp,attr,omitempty"`
		Cases     []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      float64       `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure"`
		Error     *junitProblem `xml:"error"`
		Skipped   *junitProblem `xml:"skipped"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// notJudged is what JUnit and the CI summary say of a configuration
// without bounds: it neither passes nor fails.
const notJudged = "no expect: bounds; not judged"

// WriteJUnit writes runs as a JUnit XML document: a test suite per run, a
// test case per configuration with its figures, failing (once, listing
// them) when it broke bounds of its expect, in error when it failed (was not
// measured), skipped when the run was interrupted or when it has no bounds
// (notJudged, its figures in the skip's text and in system-out).
func WriteJUnit(w io.Writer, runs []CIRun) error {
	doc := junitSuites{Name: "tunnelprobe scenario"}
	for _, run := range runs {
		s := run.Report.junitSuite(run.Name)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitSuite is r as a test suite named name.
func (r *Report) junitSuite(name string) junitSuite {
	s := junitSuite{Name: name, Time: r.DurationSeconds}
	if !r.Started.IsZero() {
		s.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
	}
	for _, cfg := range r.Order {
		c := r.Configs[cfg]
		tc := junitCase{Name: cfg, Classname: "tunnelprobe.scenario." + r.Name, Time: r.DurationSeconds, SystemOut: figures(c)}
		switch {
		case c.Failed != "":
			tc.Error = &junitProblem{Message: "not measured: " + c.Failed, Type: "failed"}
			s.Errors++
		case r.Interrupted:
			tc.Skipped = &junitProblem{Message: "the run was interrupted; its bounds were not judged"}
			s.Skipped++
		case !r.bounded(cfg):
			// Nothing says what it may measure: whatever it measured
			// (an outage missed, a working tunnel restarted) is no pass.
			tc.Skipped = &junitProblem{Message: notJudged, Text: tc.SystemOut}
			s.Skipped++
		}
		if len(c.Breaches) > 0 {
			// One failure a test case, as the JUnit schema allows, listing
			// every broken bound.
			msgs, lines := make([]string, len(c.Breaches)), make([]string, len(c.Breaches))
			for i, b := range c.Breaches {
				msgs[i], lines[i] = b.String(), b.Bound+": measured "+b.Got+", want "+b.Want
			}
			tc.Failure = &junitProblem{Message: strings.Join(msgs, "; "), Type: "expectation", Text: strings.Join(lines, "\n")}
			s.Failures++
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
	}
	return s
}

// figures are c's figures in one line, for a test case's output and the
// CI summary.
func figures(c ConfigReport) string {
	detection := "no outage detected"
	switch {
	case c.DetectionSeconds != nil:
		detection = fmt.Sprintf("detection %.1fs", *c.DetectionSeconds)
	case c.tooShort():
		detection = "the outage too short for " + c.tooShortFor()
	}
	parts := []string{
		fmt.Sprintf("false restarts %d", c.FalseRestarts), fmt.Sprintf("false heals %d", c.FalseHeals),
		fmt.Sprintf("blip actions %d", c.BlipActions), detection,
		fmt.Sprintf("probes passed %.0f%%", 100*c.ProbeSuccessRatio),
	}
	return strings.Join(parts, ", ")
}
