package matrix

import (
	"fmt"
	"slices"

	"github.com/tunnelprobe/tunnelprobe/scenarios"
)

// maxConditions bounds a matrix's conditions: Run is given the built-in
// ones (--matrix), one of them (--condition) or one spec (--repeat).
var maxConditions = len(scenarios.MatrixConditions())

// maxWallSeconds bounds a report's wall time: its runs take at most a week
// (MinDuration), and four weeks leave room for starting the labs of every
// run on a busy machine.
var maxWallSeconds = 4 * scenarios.MaxDuration.Seconds()

// validate reports the first field of m that a matrix cannot have written,
// named by its JSON path (runs[3].report.configs.k8s.false_restarts):
// what Merge, the rates and the writers rely on. The passes are 1 to
// MaxRepeat and the conditions at most the built-in ones, the
// configurations at most scenarios.MaxConfigs, each named once; every run
// is of a condition of the matrix, in a pass from 1 to Passes, one the
// shard (if m is one) makes, with a report of the condition that its
// Validate accepts and whose configurations are the matrix's.
func (m *Report) validate() error {
	if err := m.validateShape(); err != nil {
		return err
	}
	var sh Shard
	if m.Shard != "" {
		sh, _ = ParseShard(m.Shard) // validateShape checked it
	}
	for i, run := range m.Runs {
		if err := m.validateRun(run, sh); err != nil {
			return fmt.Errorf("runs[%d].%w", i, err)
		}
	}
	return nil
}

// validateShape checks m's own fields: passes, conditions, configurations,
// shard and totals.
func (m *Report) validateShape() error {
	switch {
	case m.Passes < 1 || m.Passes > MaxRepeat:
		return fmt.Errorf("passes: %d, but a matrix makes 1 to %d", m.Passes, MaxRepeat)
	case len(m.Conditions) < 1 || len(m.Conditions) > maxConditions:
		return fmt.Errorf("conditions: %d, but a matrix runs 1 to %d (as many as the built-in ones)", len(m.Conditions), maxConditions)
	case len(m.Configs) < 1 || len(m.Configs) > scenarios.MaxConfigs:
		return fmt.Errorf("configs: %d, but a matrix compares 1 to %d", len(m.Configs), scenarios.MaxConfigs)
	case m.WallSeconds < 0 || m.WallSeconds > maxWallSeconds:
		return fmt.Errorf("wall_seconds: %v s, outside 0 to %v s", m.WallSeconds, maxWallSeconds)
	case m.PeakRSSBytes < 0 || m.PeakRSSBytes > 1<<57:
		return fmt.Errorf("peak_rss_bytes: %d, outside 0 to 2^57, a 64-bit address space", m.PeakRSSBytes)
	}
	for _, names := range []struct {
		field string
		names []string
	}{{"conditions", m.Conditions}, {"configs", m.Configs}} {
		for i, name := range names.names {
			if name == "" || slices.Index(names.names, name) != i {
				return fmt.Errorf("%s[%d]: %q, but each is named, once", names.field, i, name)
			}
		}
	}
	if m.Shard != "" {
		if _, err := ParseShard(m.Shard); err != nil {
			return fmt.Errorf("shard: %w", err)
		}
	}
	return nil
}

// validateRun checks one run of m, of shard sh (the zero Shard: m is a
// whole matrix).
func (m *Report) validateRun(run RunReport, sh Shard) error {
	c := slices.Index(m.Conditions, run.Condition)
	switch {
	case c < 0:
		return fmt.Errorf("condition: %q, not one of the matrix's conditions %v", run.Condition, m.Conditions)
	case run.Pass < 1 || run.Pass > m.Passes:
		return fmt.Errorf("pass: %d, but the matrix makes passes 1 to %d", run.Pass, m.Passes)
	case !sh.has((run.Pass-1)*len(m.Conditions) + c):
		return fmt.Errorf("pass: the run of %s in pass %d is not one shard %s makes", run.Condition, run.Pass, sh)
	case run.CPU < 0 || run.CPU > 1:
		return fmt.Errorf("cpu: %v, outside 0 to 1", run.CPU)
	case run.Report == nil:
		return fmt.Errorf("report: missing")
	}
	if err := run.Report.Validate(); err != nil {
		return fmt.Errorf("report.%w", err)
	}
	switch r := run.Report; {
	case r.Name != run.Condition:
		return fmt.Errorf("report.name: %q, but the run is of %s", r.Name, run.Condition)
	case r.Seed != run.Seed:
		return fmt.Errorf("report.seed: %d, but the run's is %d", r.Seed, run.Seed)
	}
	for _, name := range run.Report.Order {
		if !slices.Contains(m.Configs, name) {
			return fmt.Errorf("report.configs.%s: not one of the matrix's configurations %v", name, m.Configs)
		}
	}
	return nil
}
