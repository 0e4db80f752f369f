//go:build unix

package loadgen

import "syscall"

// OpenFileLimit returns how many descriptors this process may open (its
// soft RLIMIT_NOFILE, which Go raises to the hard limit at start), or 0
// where that cannot be read. Each connection of a run on the host network
// or through a SOCKS5 proxy takes one; a run through an in-process
// netstack takes none.
func OpenFileLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
