// Package units writes quantities for people: byte counts in decimal
// units, as throughput is counted, and counts with thousands separators.
package units

import (
	"fmt"
	"strconv"
)

// Bytes writes n in decimal units: "999 B", "1.50 kB", "2.10 MB".
func Bytes(n uint64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.2f %cB", float64(n)/float64(div), "kMGTP"[exp])
}

// Count writes n with commas between thousands: 1,204.
func Count(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
