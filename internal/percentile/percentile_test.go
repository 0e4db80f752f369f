package percentile

import "testing"

func TestNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for p, want := range map[float64]float64{0: 1, 20: 1, 50: 3, 99: 5, 100: 5} {
		if got := NearestRank(xs, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if NearestRank(nil, 50) != 0 {
		t.Error("empty")
	}
}
