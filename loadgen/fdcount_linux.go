package loadgen

import (
	"syscall"
	"unsafe"
)

// countFDs counts the entries of /proc/self/fd, "." and ".." aside,
// reading the directory from its start into p.dirBuf with getdents64. It
// allocates nothing: at 16,000 descriptors, listing them by name each second cost the
// sampler tens of milliseconds of a saturated machine and fed the garbage
// collector. It returns 0 when the directory cannot be read.
func (p *procFiles) countFDs() int64 {
	buf := p.dirBuf
	raw, err := p.fdDir.SyscallConn()
	if err != nil {
		return 0
	}
	var n int64
	var readErr error
	err = raw.Read(func(fd uintptr) bool {
		if _, readErr = syscall.Seek(int(fd), 0, 0); readErr != nil {
			return true
		}
		for {
			got, err := syscall.Getdents(int(fd), buf)
			if err != nil {
				readErr = err
				return true
			}
			if got <= 0 {
				return true
			}
			// struct linux_dirent64: ino (8), off (8), reclen (2),
			// type (1), then the name, NUL-terminated.
			for off := 0; off < got; {
				reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+16])))
				name := buf[off+19 : off+reclen]
				if !(name[0] == '.' && (name[1] == 0 || name[1] == '.' && name[2] == 0)) {
					n++
				}
				off += reclen
			}
		}
	})
	if err != nil || readErr != nil {
		return 0
	}
	return n
}
