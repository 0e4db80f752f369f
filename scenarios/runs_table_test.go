package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Runs of one spec make one table, a row per configuration with each
// figure run by run; what was not measured says so.
func TestWriteRunsTable(t *testing.T) {
	first, second := runReport(t, QuickSuite()), runReport(t, QuickSuite())
	second.Seed = 2
	second.Spec.Seed = 2
	c := second.Configs["evidence"]
	c.Utilisation = nil
	second.Configs["evidence"] = c
	var b strings.Builder
	if err := WriteRunsTable(&b, []*Report{first, second}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if rows := strings.Count(out, "\n| ") - 2; rows != len(first.Order) {
		t.Errorf("%d rows, want one per configuration (%d):\n%s", rows, len(first.Order), out)
	}
	for _, want := range []string{`Scenario "quick", 2 run(s)`, "(seed 1)", "(seed 2)", "| evidence | 1, 1 | 1, 1 | 8.0 / 8.0 | 50%, 50% |"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	evidence := out[strings.Index(out, "| evidence |"):]
	if line := evidence[:strings.Index(evidence, "\n")]; !strings.HasSuffix(line, ", n/m |") {
		t.Errorf("evidence's row %q: its second run's utilisation was not measured, want n/m", line)
	}

	other := runReport(t, DefaultSuite())
	if err := WriteRunsTable(&b, []*Report{first, other}); err == nil || !strings.Contains(err.Error(), "not of one spec") {
		t.Errorf("runs of two specs: %v, want refused", err)
	}
	if err := WriteRunsTable(&b, nil); err == nil {
		t.Error("no run: no error")
	}
}

// ReadReport names the file it refuses, and reads back what a run wrote.
func TestReadReport(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, err := json.Marshal(runReport(t, QuickSuite()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReport(write("good.json", good)); err != nil {
		t.Errorf("a run's report: %v", err)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"empty.json", "", "empty.json"},
		{"text.json", "not json", "text.json"},
		{"seed.json", strings.Replace(string(good), `"seed":1`, `"seed":7`, 1), "seed.json: seed: 7"},
		{"dense.json", `{"order":[` + strings.Repeat(`"a",`, 100) + `"a"]}`, "dense.json: order: 101 entries"},
	} {
		if _, err := ReadReport(write(tc.name, []byte(tc.data))); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadReport(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v", err)
	}
}
