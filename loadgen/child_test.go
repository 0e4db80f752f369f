package loadgen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// The test binary runs as a child process when childEnv is set: it then
// runs the scenario named by its value and exits, without running tests.
// Limits that are process-wide (open files) are only ever changed in such
// a child, never in the test process itself.
const (
	childEnv       = "LOADGEN_TEST_CHILD"
	childTargetEnv = "LOADGEN_TEST_TARGET"
)

// runChild runs scenario and returns the exit code.
func runChild(scenario string) int {
	switch scenario {
	case "emfile":
		// 64 descriptors: the runtime's few, then about 50 sockets.
		lim := unix.Rlimit{}
		if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		lim.Cur = 64
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		res, err := loadgen.Run(context.Background(), loadgen.Config{
			Target:      os.Getenv(childTargetEnv),
			Conns:       200,
			Duration:    300 * time.Millisecond,
			Rate:        1e6,
			NoReconnect: true,
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown child scenario %q\n", scenario)
	return 2
}

func TestRunTooManyOpenFiles(t *testing.T) {
	s := startSink(t, "127.0.0.1:0")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"=emfile", childTargetEnv+"="+s.Addr)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	var res loadgen.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("child's result: %v\n%s", err, out)
	}
	t.Logf("errors %v, achieved %d of %d", res.Errors, res.ConnsAchieved, res.ConnsRequested)
	if res.Errors["too_many_open_files"] == 0 {
		t.Errorf("errors %v, want too_many_open_files", res.Errors)
	}
	if res.ConnsAchieved == 0 || res.ConnsAchieved >= 200 {
		t.Errorf("achieved %d connections under a limit of 64 files", res.ConnsAchieved)
	}
}
