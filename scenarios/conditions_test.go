package scenarios

import (
	"testing"
	"time"
)

func TestMatrixConditionsAreValid(t *testing.T) {
	var total time.Duration
	names := map[string]bool{}
	for _, s := range MatrixConditions() {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		names[s.Name] = true
		total += s.Duration.Duration
		if len(s.Configs) != 8 || s.Configs[7].Name != "evidence-15s" {
			t.Errorf("%s: %d configurations", s.Name, len(s.Configs))
		}
	}
	if len(names) != 10 {
		t.Errorf("%d conditions, want 10 with distinct names", len(names))
	}
	if total > 33*time.Minute {
		t.Errorf("a pass takes %v of runs: too long for 35 minutes", total)
	}
}
