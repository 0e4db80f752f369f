package scenarios

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/internal/infile"
	"github.com/tunnelprobe/tunnelprobe/internal/jsonsize"
)

// maxReportFile bounds a report.json that ReadReport reads: a default run's
// timelines take a few MiB.
const maxReportFile = 256 << 20

// ReadReport reads a report.json that a scenario run wrote, and refuses one
// no run writes (a field out of its range), naming the file.
func ReadReport(name string) (*Report, error) {
	data, _, err := infile.Read(name, maxReportFile, "a report.json")
	if err != nil {
		return nil, err
	}
	// Weighed before it is decoded, as a matrix.json is (matrix.ReadJSON):
	// a report's timelines take less memory than their text.
	if err := jsonsize.Bound(data, reflect.TypeFor[Report](), 3, 1<<20, map[string]int{
		"spec.configs": MaxConfigs, "spec.link.outages": MaxOutages, "spec.link.changes": MaxLinkChanges,
		"configs": MaxConfigs, "order": MaxConfigs,
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &r, nil
}

// WriteRunsTable writes runs of one spec as a Markdown table, a row per
// configuration, each figure run by run: the false restarts and heals, the
// seconds from each outage's start to the action on it ("-" missed,
// "short" where the outage was too short for its schedule; a run's
// outages apart by spaces, the runs by "/"), the probes passed and the
// utilisation while the link worked ("n/m": not measured). It refuses runs
// of different specs.
func WriteRunsTable(w io.Writer, runs []*Report) error {
	if len(runs) == 0 {
		return fmt.Errorf("no run")
	}
	order := runs[0].Order
	for _, r := range runs[1:] {
		if r.Name != runs[0].Name || !slices.Equal(r.Order, order) {
			return fmt.Errorf("runs of %q (%s) and %q (%s) are not of one spec", runs[0].Name, strings.Join(order, ", "), r.Name, strings.Join(r.Order, ", "))
		}
	}
	var b strings.Builder
	var started []string
	for _, r := range runs {
		started = append(started, fmt.Sprintf("%s (seed %d)", r.Started.UTC().Format("2006-01-02 15:04"), r.Seed))
	}
	fmt.Fprintf(&b, "Scenario %q, %d run(s), started %s.\n\n", runs[0].Name, len(runs), strings.Join(started, ", "))
	b.WriteString("| configuration | false restarts | false heals | acted on each outage after (s) | probes passed | utilisation |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, name := range order {
		var restarts, heals, detection, probes, util []string
		for _, r := range runs {
			c := r.Configs[name]
			restarts = append(restarts, fmt.Sprint(c.FalseRestarts))
			heals = append(heals, fmt.Sprint(c.FalseHeals))
			var each []string
			for _, o := range c.Outages {
				switch {
				case o.DetectionSeconds != nil:
					each = append(each, fmt.Sprintf("%.1f", *o.DetectionSeconds))
				case o.TooShort:
					each = append(each, "short")
				default:
					each = append(each, "-")
				}
			}
			detection = append(detection, strings.Join(each, " "))
			probes = append(probes, fmtShare(c.probesPassed()))
			util = append(util, fmtShare(c.Utilisation))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", name, strings.Join(restarts, ", "), strings.Join(heals, ", "),
			strings.Join(detection, " / "), strings.Join(probes, ", "), strings.Join(util, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// probesPassed is c's share of probes passed while the link worked; nil,
// not measured, where there was none.
func (c ConfigReport) probesPassed() *float64 {
	if c.Probes == 0 {
		return nil
	}
	return &c.ProbeSuccessRatio
}
