package reaper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// Run reaps the orphans until ctx ends: at once (those inherited before
// it ran), then on each SIGCHLD. It returns nil when ctx ends, or an error
// at once when /proc does not show this process's PID namespace (a
// container without its own /proc), since it could not tell which
// children exited.
func (r *Reaper) Run(ctx context.Context) error {
	if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
		return fmt.Errorf("reaper: /proc is not this PID namespace's (/proc/self is %q, %v; the pid is %d)", self, err, os.Getpid())
	}
	// Notified before the first look: a SIGCHLD between the two is not
	// lost, and one before both finds its zombie there already.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	defer signal.Stop(sig)
	self := os.Getpid()
	for {
		for _, o := range r.reap(self) {
			if r.reaped != nil {
				r.reaped(o)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-sig:
		case <-r.kick:
		}
	}
}

// reap waits for each exited child of self (the process) that is not
// ours, by pid, and returns those it reaped. It holds mu meanwhile: a
// child being forked by Start is registered before it is looked at.
func (r *Reaper) reap(self int) []Orphan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var reaped []Orphan
	children, _ := Children(self) // Run found /proc: it does not go away
	for pid, state := range children {
		if _, ours := r.ours[pid]; ours || state != 'Z' {
			continue
		}
		if ws, ok := wait(pid); ok {
			reaped = append(reaped, Orphan{Pid: pid, Status: ws})
		}
	}
	return reaped
}

// wait reaps the exited child pid.
func wait(pid int) (syscall.WaitStatus, bool) {
	var ws syscall.WaitStatus
	for {
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return ws, err == nil && got == pid
	}
}

// Children returns the state of each child of the process parent, by
// pid, from /proc: 'Z' is a zombie, one that exited and waits to be
// reaped. Its parent's PID namespace must be /proc's.
func Children(parent int) (map[int]byte, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int]byte{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue // not a process
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		if state, ppid, ok := parseStat(stat); ok && ppid == parent {
			children[pid] = state
		}
	}
	return children, nil
}

// parseStat returns the state and the parent's pid from a /proc/PID/stat
// line, "pid (comm) state ppid ...". comm is the process's own to set and
// may hold spaces and parentheses, so the fields are counted from its
// last ')'.
func parseStat(stat []byte) (state byte, ppid int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], ppid, true
}
