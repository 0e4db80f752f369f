package reaper

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// hangGuard bounds every wait; it only fires when a test is broken.
const hangGuard = 10 * time.Second

// subreaper makes the test process inherit the orphans of its commands'
// children, as PID 1 does, until the test ends.
func subreaper(t *testing.T) {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skipf("cannot become a child subreaper: %v", err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
}

// running runs r until the test ends, and returns what it reaped.
func running(t *testing.T, r func(reaped func(Orphan)) *Reaper) (*Reaper, <-chan Orphan) {
	t.Helper()
	reaped := make(chan Orphan, 16)
	rp := r(func(o Orphan) { reaped <- o })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rp.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return rp, reaped
}

// leaveOrphan runs, through r, a shell that starts a background job,
// prints its pid and exits 3: what a heal command does that leaves a
// daemon behind. It returns the command, not yet waited for, once the
// shell has exited, and the orphan's pid.
func leaveOrphan(t *testing.T, r *Reaper) (*exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "sleep 1714 >/dev/null 2>&1 & echo $!; exit 3")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(cmd); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(out) // EOF: the shell has exited, the sleep is ours
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the shell printed %q, want the orphan's pid", b)
	}
	return cmd, pid
}

// exitCode is cmd's exit code from Wait's error.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("Wait: %v, want the command's exit status", err)
	}
	return exit.ExitCode()
}

// An orphan that exits is reaped, and only it: the shell that left it,
// a zombie too until os/exec waits for it, keeps its exit status for
// Wait, although Run looked while both were there to be reaped.
func TestOrphansAreReapedAndExitStatusesKept(t *testing.T) {
	subreaper(t)
	r, reaped := running(t, New)
	for range 5 {
		cmd, orphan := leaveOrphan(t, r)
		if err := syscall.Kill(orphan, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case o := <-reaped:
			if o.Pid != orphan || !o.Status.Signaled() || o.Status.Signal() != syscall.SIGKILL {
				t.Fatalf("reaped %d (%v), want the killed orphan %d", o.Pid, o.Status, orphan)
			}
		case <-time.After(hangGuard):
			t.Fatalf("the orphan %d was not reaped", orphan)
		}
		if code := exitCode(t, r.Wait(cmd)); code != 3 {
			t.Errorf("the shell exited %d, want 3", code)
		}
		children, err := Children(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		for pid, state := range children {
			if state == 'Z' {
				t.Errorf("a zombie left: %d", pid)
			}
		}
	}
}

// Run reaps at once the orphans that exited before it ran, whose SIGCHLD
// came when no one listened.
func TestOrphansFromBeforeRunAreReaped(t *testing.T) {
	subreaper(t)
	var none *Reaper // plain os/exec: nothing reaps yet
	cmd, orphan := leaveOrphan(t, none)
	if code := exitCode(t, none.Wait(cmd)); code != 3 {
		t.Errorf("the shell exited %d, want 3", code)
	}
	if err := syscall.Kill(orphan, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Until it is a zombie, without reaping it.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, orphan, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	_, reaped := running(t, New)
	select {
	case o := <-reaped:
		if o.Pid != orphan {
			t.Errorf("reaped %d, want %d", o.Pid, orphan)
		}
	case <-time.After(hangGuard):
		t.Fatalf("the orphan %d, a zombie before Run, was not reaped", orphan)
	}
}
