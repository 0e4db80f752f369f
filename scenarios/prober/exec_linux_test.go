package prober

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The exec probe's timeout kills the command with what it started: the
// shell and the sleep it left in the background.
func TestExecTimeoutKillsWhatItStarted(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	r := Exec(t.Context(), []string{"sh", "-c", "sleep 60 & echo $! > " + pidFile + "; wait"}, 300*time.Millisecond)
	if r.Outcome != Failure || !strings.Contains(r.Err.Error(), "timed out") {
		t.Fatalf("a command past its timeout: %v, %v; want a failure", r.Outcome, r.Err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// SIGKILLed with its group; the kernel finishes it a moment after the
	// shell, which Exec waited for. A pidfd turns readable when it has
	// exited: no later than a moment, never after its 60 s.
	if !exits(t, pid, 5*time.Second) {
		t.Errorf("the background sleep (pid %d) outlived the probe's timeout", pid)
	}
}

// exits reports whether process pid has exited (or is gone) within
// bound, waiting on a pidfd, which the kernel makes readable at its exit.
func exits(t *testing.T, pid int, bound time.Duration) bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true // reaped already
	}
	if err != nil {
		t.Fatalf("pidfd of %d: %v", pid, err)
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(bound.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n == 1
	}
}
