//go:build !unix

package loadgen

// OpenFileLimit returns 0: the limit is not known on this system.
func OpenFileLimit() int { return 0 }
