//go:build unix

package harness

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// labDirGrace is how old an unlocked lab folder must be before it counts
// as abandoned: a younger one may belong to a lab that has made it and is
// about to lock it.
const labDirGrace = time.Minute

// labDir is the folder an OpenVPN lab writes its keys and configurations
// into; openvpn reads them at every start. The lab holds an exclusive
// flock on it for its whole life, so that a folder left by a lab that was
// killed before it could remove it (SIGKILL, the OOM killer) is unlocked,
// and the next OpenVPN lab to start removes it, keys and all. A lock
// rather than a process ID: a lab in another PID namespace that shares
// the temporary directory would look dead by its ID.
type labDir struct {
	path string
	lock *os.File // open, and flocked, until remove
}

// newLabDir removes the abandoned lab folders, then makes and locks a new
// one.
func newLabDir() (*labDir, error) {
	removeAbandonedLabDirs(time.Now())
	path, err := os.MkdirTemp("", labDirPattern)
	if err != nil {
		return nil, err
	}
	lock, err := os.Open(path)
	if err == nil {
		if err = unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			lock.Close()
		}
	}
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(path))
	}
	return &labDir{path: path, lock: lock}, nil
}

// remove removes the folder and everything in it, then lets go of its
// lock. Once is enough: a lab's Close may come after a failed Start's.
func (d *labDir) remove() error {
	err := os.RemoveAll(d.path)
	if d.lock != nil {
		err = errors.Join(err, d.lock.Close())
		d.lock = nil
	}
	return err
}

// removeAbandonedLabDirs removes the lab folders in the temporary
// directory that are this user's, at least labDirGrace old at now, and
// that no lab holds locked. It returns their paths; what it cannot read
// or lock, it leaves.
func removeAbandonedLabDirs(now time.Time) []string {
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), labDirPattern+"*"))
	var removed []string
	for _, path := range paths {
		if removeIfAbandoned(path, now) {
			removed = append(removed, path)
		}
	}
	return removed
}

// removeIfAbandoned removes path and reports true when it is a folder (not
// a link to one) of this user's, at least labDirGrace old, that it could
// lock.
func removeIfAbandoned(path string, now time.Time) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() || now.Sub(fi.ModTime()) < labDirGrace {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer f.Close() // after the removal: the lock is held until then
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false // a live lab's
	}
	return os.RemoveAll(path) == nil
}
