// Package percentile computes the percentiles the reports print.
package percentile

import (
	"math"
	"slices"
)

// NearestRank returns the p-th percentile of xs (nearest rank), 0 when empty.
func NearestRank(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}
