//go:build !linux

package loadgen

import "io"

// countFDs counts the entries of /proc/self/fd, read from its start; 0
// when it cannot be read.
func (p *procFiles) countFDs() int64 {
	if _, err := p.fdDir.Seek(0, io.SeekStart); err != nil {
		return 0
	}
	names, err := p.fdDir.Readdirnames(-1)
	if err != nil {
		return 0
	}
	return int64(len(names))
}
