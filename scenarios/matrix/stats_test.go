package matrix

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 0.0005*math.Max(1, math.Abs(b)) }

// Known values of the exact intervals (from tables of the Poisson and
// binomial distributions).
func TestIntervalsOnKnownCounts(t *testing.T) {
	for _, tc := range []struct {
		count           int
		hours           float64
		rate, low, high float64
	}{
		{0, 1, 0, 0, 3.6889},
		{5, 1, 5, 1.6235, 11.6683},
		{1, 2, 0.5, 0.0127, 2.7858}, // 0.0253 to 5.5716 events, over 2 hours
	} {
		r := PoissonRate(tc.count, tc.hours)
		if !near(r.PerHour, tc.rate) || !near(r.Interval.Low, tc.low) || !near(r.Interval.High, tc.high) {
			t.Errorf("PoissonRate(%d, %v) = %+v, want %v (%v-%v)", tc.count, tc.hours, r, tc.rate, tc.low, tc.high)
		}
	}
	for _, tc := range []struct {
		k, n      int
		low, high float64
	}{
		{0, 6, 0, 0.4593},
		{3, 6, 0.1181, 0.8819},
		{6, 6, 0.5407, 1},
		{7, 10, 0.3475, 0.9333},
	} {
		iv := ClopperPearson(tc.k, tc.n)
		if !near(iv.Low, tc.low) || !near(iv.High, tc.high) {
			t.Errorf("ClopperPearson(%d, %d) = %+v, want %v-%v", tc.k, tc.n, iv, tc.low, tc.high)
		}
	}
}
