package netnstest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Unavailable skips the test, or fails it where kernel devices are
// required (TUNNELPROBE_REQUIRE_DOCKER=1, as in CI).
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("TUNNELPROBE_REQUIRE_DOCKER") == "1" {
		t.Fatalf("kernel devices required: "+format, args...)
	}
	t.Skipf("kernel devices unavailable: "+format, args...)
}

// IP runs the ip command with args and fails t if it fails.
func IP(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// New creates a network namespace for the test and deletes it, with
// every device in it, when the test ends.
func New(t testing.TB, suffix string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		Unavailable(t, "no ip command")
	}
	name := fmt.Sprintf("tp%d%s", os.Getpid(), suffix)
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		Unavailable(t, "ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	IP(t, "-n", name, "link", "set", "lo", "up")
	return name
}

// Run runs f on a thread in network namespace ns and fails t if it cannot.
// Sockets and devices f creates stay there.
func Run(t testing.TB, ns string, f func()) {
	t.Helper()
	if err := Do(ns, f); err != nil {
		t.Fatal(err)
	}
}

// Do runs f on a thread in network namespace ns and waits for it. It is
// Run for code that runs outside the test's goroutine, such as a
// WireGuard bind opening its sockets.
func Do(ns string, f func()) error {
	done := make(chan error, 1)
	go func() {
		// f may end the goroutine with t.Fatal (runtime.Goexit): the
		// deferred send still tells the caller, and the thread, locked and
		// perhaps still in ns, dies with the goroutine.
		finished := false
		defer func() {
			if !finished {
				done <- errors.New("the function run in " + ns + " did not return (t.Fatal, or a panic)")
			}
		}()
		runtime.LockOSThread()
		finished = true
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			done <- err
			return
		}
		defer orig.Close()
		target, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			done <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		finished = false
		f()
		finished = true
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- err // the thread stays locked and dies with the goroutine
			return
		}
		runtime.UnlockOSThread()
		done <- nil
	}()
	return <-done
}

// Veth joins namespaces near and far with a veth pair, nearDev (with
// nearAddr, a prefix such as 10.79.0.1/24) in near and farDev (farAddr)
// in far, both up.
func Veth(t testing.TB, near, far, nearDev, farDev, nearAddr, farAddr string) {
	t.Helper()
	IP(t, "-n", near, "link", "add", nearDev, "type", "veth", "peer", "name", farDev, "netns", far)
	IP(t, "-n", near, "addr", "add", nearAddr, "dev", nearDev)
	IP(t, "-n", far, "addr", "add", farAddr, "dev", farDev)
	IP(t, "-n", near, "link", "set", nearDev, "up")
	IP(t, "-n", far, "link", "set", farDev, "up")
}
