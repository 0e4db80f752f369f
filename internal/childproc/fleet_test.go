package childproc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
)

// stopBound is how soon a fleet must be done once it is stopped: well
// under childproc.WaitDelay, so that children exited on SIGTERM rather
// than being killed.
const stopBound = 3 * time.Second

// testFleet is a fleet of this test binary as testChild, with what its
// children reported and whether OnReady was called.
type testFleet struct {
	childproc.Fleet[testConfig, int]
	mu      sync.Mutex
	reports map[int][]int
	ready   bool
}

func newTestFleet(t *testing.T) *testFleet {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := &testFleet{reports: map[int][]int{}}
	f.Command = func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, exe)
		cmd.Env = append(os.Environ(), childEnv+"=1")
		cmd.Stderr = os.Stderr
		return cmd
	}
	f.Name = func(i int) string { return fmt.Sprintf("worker %d", i+1) }
	f.OnReady = func(broadcast func(any)) {
		f.ready = true // Run's goroutine: read once Run returns
		broadcast(7)
	}
	f.Receive = func(i int, n int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.reports[i] = append(f.reports[i], n)
	}
	return f
}

// run runs f with a child per mode and returns how long Run took and its
// error.
func (f *testFleet) run(ctx context.Context, modes ...string) (time.Duration, error) {
	configs := make([]testConfig, len(modes))
	for i, m := range modes {
		configs[i] = testConfig{Mode: m}
	}
	start := time.Now()
	err := f.Run(ctx, configs)
	return time.Since(start), err
}

// childError returns err as a *ChildError, failing t when it is not one.
func childError(t *testing.T, err error) *childproc.ChildError {
	t.Helper()
	var ce *childproc.ChildError
	if !errors.As(err, &ce) {
		t.Fatalf("Run = %v, want a *ChildError", err)
	}
	return ce
}

// checkStopped checks that the children were stopped promptly, each
// reporting as it stopped.
func (f *testFleet) checkStopped(t *testing.T, took time.Duration, children ...int) {
	t.Helper()
	for _, i := range children {
		if got := f.reports[i]; !slices.Equal(got, []int{stoppedReport}) {
			t.Errorf("child %d reported %v, want that it stopped", i, got)
		}
	}
	if took > stopBound {
		t.Errorf("took %v to stop", took)
	}
}

func TestFleetRun(t *testing.T) {
	f := newTestFleet(t)
	if _, err := f.run(t.Context(), "echo", "echo", "echo"); err != nil {
		t.Fatal(err)
	}
	if !f.ready {
		t.Error("OnReady not called")
	}
	for i := range 3 {
		if got := f.reports[i]; !slices.Equal(got, []int{7}) {
			t.Errorf("child %d reported %v, want the broadcast [7]", i, got)
		}
	}
}

// TestFleetChildFailsBeforeReady: the child's own reason is Run's error,
// the start is never broadcast, and the other child is stopped.
func TestFleetChildFailsBeforeReady(t *testing.T) {
	f := newTestFleet(t)
	took, err := f.run(t.Context(), "serve", "fail-before-ready")
	ce := childError(t, err)
	if ce.Index != 1 || err.Error() != "worker 2: cannot set up" {
		t.Errorf("Run = %q (child %d), want worker 2's reason", err, ce.Index)
	}
	if f.ready {
		t.Error("OnReady called although a child failed")
	}
	if took > stopBound {
		t.Errorf("took %v to stop", took)
	}
}

func TestFleetChildExitsBeforeReady(t *testing.T) {
	f := newTestFleet(t)
	_, err := f.run(t.Context(), "exit-before-ready", "serve")
	if ce := childError(t, err); !errors.Is(ce, childproc.ErrExitedBeforeReady) || err.Error() != "worker 1 exited before it was ready" {
		t.Errorf("Run = %q, want worker 1 exited before it was ready", err)
	}
}

// TestFleetChildFailsLater: a child that fails once running stops the
// others, which still report as they stop.
func TestFleetChildFailsLater(t *testing.T) {
	f := newTestFleet(t)
	took, err := f.run(t.Context(), "serve", "fail-later", "serve")
	if ce := childError(t, err); ce.Index != 1 || ce.Err.Error() != "broke" {
		t.Errorf("Run = %v, want child 2's failure", err)
	}
	if !f.ready {
		t.Error("OnReady not called")
	}
	f.checkStopped(t, took, 0, 2)
}

// With KeepGoing a child that fails once all are ready leaves the others
// to finish their work; its failure is still Run's.
func TestFleetKeepGoing(t *testing.T) {
	f := newTestFleet(t)
	f.KeepGoing = true
	_, err := f.run(t.Context(), "echo", "fail-later", "echo")
	if ce := childError(t, err); ce.Index != 1 || ce.Err.Error() != "broke" {
		t.Errorf("Run = %v, want child 2's failure", err)
	}
	for _, i := range []int{0, 2} {
		if got := f.reports[i]; !slices.Equal(got, []int{7}) {
			t.Errorf("child %d reported %v, want it to have finished its work ([7])", i, got)
		}
	}
	// Before every child is ready a failure still stops the others.
	f = newTestFleet(t)
	f.KeepGoing = true
	took, err := f.run(t.Context(), "serve", "fail-before-ready")
	if ce := childError(t, err); ce.Index != 1 {
		t.Errorf("Run = %v, want child 2's failure", err)
	}
	if took > stopBound {
		t.Errorf("took %v to stop", took)
	}
}

func TestFleetLastingChildExits(t *testing.T) {
	f := newTestFleet(t)
	f.Lasting = true
	_, err := f.run(t.Context(), "serve", "exit")
	if ce := childError(t, err); !errors.Is(ce, childproc.ErrExited) || err.Error() != "worker 2 exited" {
		t.Errorf("Run = %v, want worker 2 exited", err)
	}
}

// TestFleetStopped: the end of the context mid-run stops every child, each
// reporting as it stops, and is no error.
func TestFleetStopped(t *testing.T) {
	f := newTestFleet(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f.OnReady = func(func(any)) { cancel() }
	took, err := f.run(ctx, "serve", "serve")
	if err != nil {
		t.Errorf("Run = %v, want nil once stopped", err)
	}
	f.checkStopped(t, took, 0, 1)
}

func TestFleetStartTimeout(t *testing.T) {
	f := newTestFleet(t)
	f.StartTimeout = 300 * time.Millisecond
	took, err := f.run(t.Context(), "serve", "hang")
	var te *childproc.StartTimeoutError
	if !errors.As(err, &te) || te.Limit != f.StartTimeout {
		t.Errorf("Run = %v, want a start timeout of %v", err, f.StartTimeout)
	}
	if took > stopBound {
		t.Errorf("took %v to stop", took)
	}
}

// TestFleetCannotStart: a child that cannot be started fails the run, and
// the one started before it is stopped and waited for.
func TestFleetCannotStart(t *testing.T) {
	f := newTestFleet(t)
	command, started := f.Command, 0
	f.Command = func(ctx context.Context) *exec.Cmd {
		if started++; started == 2 {
			return exec.CommandContext(ctx, "/nonexistent/child")
		}
		return command(ctx)
	}
	took, err := f.run(t.Context(), "serve", "serve")
	if err == nil || errors.As(err, new(*childproc.ChildError)) {
		t.Errorf("Run = %v, want why the child could not start", err)
	}
	// The first child may be stopped before it can catch SIGTERM: that
	// it is waited for is what Run's return says.
	if took > stopBound {
		t.Errorf("took %v to stop", took)
	}
}
