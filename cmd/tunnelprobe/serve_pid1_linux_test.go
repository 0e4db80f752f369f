package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/internal/reaper"
)

// orphaningHeal leaves two orphans each time it runs, as issue 29 found:
// a daemon started as docs/serve.md recommends (it exits a second later),
// and a background job left in the heal's process group (killed when the
// heal ends). Its own exit status is 3.
const orphaningHeal = `setsid sh -c 'sleep 1 >/dev/null 2>&1 &'; sleep 1714 >/dev/null 2>&1 & echo bg; exit 3`

// startPID1 runs the built binary's serve with args as PID 1 of a PID
// namespace of its own (with its own /proc, as a container has), and
// returns its pid outside the namespace and its stderr's lines. The
// test's cleanup stops it with SIGTERM, as a container runtime does.
func startPID1(t *testing.T, args ...string) (pid int, logs <-chan string) {
	t.Helper()
	if os.Geteuid() != 0 {
		netnstest.Unavailable(t, "a PID namespace needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		netnstest.Unavailable(t, "no unshare command")
	}
	if out, err := exec.Command(unshare, "--pid", "--fork", "--mount-proc", "true").CombinedOutput(); err != nil {
		netnstest.Unavailable(t, "unshare --pid: %v: %s", err, out)
	}
	cmd := exec.Command(unshare, append([]string{"--pid", "--fork", "--mount-proc", "--kill-child", builtBinary(t), "serve"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		for s := bufio.NewScanner(stderr); s.Scan(); {
			lines <- s.Text()
		}
	}()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); !strings.Contains(line, "listening on") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("serve did not start: %q %v", line, err)
	}
	children, err := reaper.Children(cmd.Process.Pid) // unshare's one child: serve
	if err != nil || len(children) != 1 {
		t.Fatalf("unshare's children: %v, %v; want serve alone", children, err)
	}
	for child := range children {
		pid = child
	}
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve as PID 1 ended with %v, want exit 0 at SIGTERM", err)
		}
	})
	return pid, lines
}

// zombiesUnder returns the zombies among the descendants of pid, and the
// ps-like lines of all of them.
func zombiesUnder(t *testing.T, pid int) (zombies []int, tree []string) {
	t.Helper()
	for next := []int{pid}; len(next) > 0; {
		parent := next[0]
		next = next[1:]
		children, err := reaper.Children(parent)
		if err != nil {
			t.Fatal(err)
		}
		for child, state := range children {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", child))
			tree = append(tree, fmt.Sprintf("%d %c %s (parent %d)", child, state, strings.TrimSpace(string(comm)), parent))
			if state == 'Z' {
				zombies = append(zombies, child)
			}
			next = append(next, child)
		}
	}
	return zombies, tree
}

// Issue 29 item 6: serve as PID 1 (as in its FROM scratch image) reaps
// the orphans its heals leave, a daemon's and a killed job's, so that no
// zombie stays in its PID namespace; the heal's own exit status 3 is
// still what decides it.
func TestServeAsPID1ReapsOrphansOfHeals(t *testing.T) {
	t.Parallel()
	pid, logs := startPID1(t, "--listen", "127.0.0.1:0", "--check", "tcp", "--target", "127.0.0.1:1",
		"--timeout", "1s", "--period", "100ms", "--heal-cmd", orphaningHeal, "--log-level", "debug")
	var seen []string
	healed, reaped := false, 0
	deadline := time.After(time.Minute) // the first heal comes after 6 s unhealthy
	for !healed || reaped < 2 {
		select {
		case line, ok := <-logs:
			if !ok {
				t.Fatalf("serve ended; its log:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, line)
			switch {
			case strings.Contains(line, `msg="heal command ran"`):
				if healed = true; !strings.Contains(line, `err="exit status 3"`) {
					t.Errorf("the heal did not end with its command's exit status 3: %s", line)
				}
			case strings.Contains(line, `msg="reaped an orphan"`):
				reaped++
			}
		case <-deadline:
			_, tree := zombiesUnder(t, pid)
			t.Fatalf("healed %v, %d orphans reaped, want 2; serve's processes:\n%s\nits log:\n%s",
				healed, reaped, strings.Join(tree, "\n"), strings.Join(seen, "\n"))
		}
	}
	if zombies, tree := zombiesUnder(t, pid); len(zombies) > 0 {
		t.Errorf("zombies %v in serve's PID namespace:\n%s", zombies, strings.Join(tree, "\n"))
	}
}
