package netnstest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// OpenVPNProcess is an openvpn process the test's process started.
type OpenVPNProcess struct {
	PID         int
	NS, Cmdline string // its network namespace; its command line
}

// OpenVPNChildren lists the openvpn processes whose parent is this process.
func OpenVPNChildren() []OpenVPNProcess {
	var kids []OpenVPNProcess
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil || !strings.Contains(string(b), "(openvpn)") {
			continue
		}
		f := strings.Fields(string(b)[strings.LastIndex(string(b), ")")+2:])
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		dir := filepath.Dir(st)
		pid, _ := strconv.Atoi(filepath.Base(dir))
		ns, _ := os.Readlink(filepath.Join(dir, "ns/net"))
		cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		kids = append(kids, OpenVPNProcess{PID: pid, NS: ns, Cmdline: string(cmd)})
	}
	return kids
}

// KillOpenVPNOnce kills the first openvpn child of this process whose
// command line holds conf ("client.ovpn", "server.conf") once after has
// passed, reports it, and closes the channel; closed with nothing if ctx
// ends first or there is none to kill.
func KillOpenVPNOnce(ctx context.Context, after time.Duration, conf string) <-chan OpenVPNProcess {
	killed := make(chan OpenVPNProcess, 1)
	go func() {
		defer close(killed)
		t := time.NewTimer(after)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, k := range OpenVPNChildren() {
			if strings.Contains(k.Cmdline, conf) && syscall.Kill(k.PID, syscall.SIGKILL) == nil {
				killed <- k
				return
			}
		}
	}()
	return killed
}

// AssertGone fails t if a process of pids is alive, or anything (a
// process, or a descriptor of this one) still holds one of namespaces.
func AssertGone(t testing.TB, pids []int, namespaces []string) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d is still there (%v)", pid, err)
		}
	}
	holders, _ := filepath.Glob("/proc/[0-9]*/ns/net")
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, h := range append(holders, fds...) {
		if ns, err := os.Readlink(h); err == nil && slices.Contains(namespaces, ns) {
			t.Errorf("%s still holds the lab's namespace %s", h, ns)
		}
	}
}
