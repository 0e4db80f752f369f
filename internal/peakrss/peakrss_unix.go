//go:build unix

package peakrss

import (
	"runtime"
	"syscall"
)

// Bytes returns the process's peak resident memory in bytes.
func Bytes() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss // bytes there, KiB elsewhere
	}
	return ru.Maxrss << 10
}
