package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/syncbuf"
)

func TestHealCommand(t *testing.T) {
	t.Parallel()
	logs := new(syncbuf.Buffer)
	logger := slog.New(slog.NewTextHandler(logs, nil))

	file := filepath.Join(t.TempDir(), "healed")
	if err := HealCommand(fmt.Sprintf("echo restarting; touch '%s'", file), logger)(context.Background()); err != nil {
		t.Fatalf("heal: %v", err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the heal command did not run: %v", err)
	}
	if !strings.Contains(logs.String(), "restarting") {
		t.Errorf("the output is not logged:\n%s", logs)
	}

	err := HealCommand("echo broken >&2; exit 3", logger)(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("failing heal returned %v, want an error naming exit status 3", err)
	}
	if !strings.Contains(logs.String(), "broken") {
		t.Errorf("stderr of the command is not logged:\n%s", logs)
	}

	// A command that prints without end is logged by its two ends only.
	logs.Reset()
	if err := HealCommand("echo THE-START; yes | head -c 10000000; echo THE-END", logger)(context.Background()); err != nil {
		t.Fatalf("heal: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "THE-START") || !strings.Contains(l, "THE-END") ||
		!strings.Contains(l, "bytes omitted") || len(l) > 4*healOutputEnd+1024 {
		t.Errorf("10 MB of output logged as %d bytes: %.300q...", len(l), l)
	}

	// The heal's context bounds the command.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	// A child of the shell that keeps the output open dies with it.
	if err := HealCommand("sleep 30 & sleep 30; echo done", logger)(ctx); err == nil {
		t.Error("a heal killed by its context returned nil")
	}
	if d := time.Since(start); d > healOutputWait/2 {
		t.Errorf("the heal outlived its context by %v", d)
	}
}

// A heal that leaves a background job behind (as a careless daemon start
// does) succeeds by its exit status, and what it left in its process group
// is killed when it exits, so repeated heals leave nothing behind.
func TestHealCommandLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	logs := new(syncbuf.Buffer)
	logger := slog.New(slog.NewTextHandler(logs, nil))
	pidFile := filepath.Join(t.TempDir(), "pid")
	err := HealCommand(fmt.Sprintf("sleep 1000 & echo $! >'%s'; echo restarted", pidFile), logger)(context.Background())
	if err != nil {
		t.Fatalf("a heal that exits 0 returned %v", err)
	}
	l := logs.String()
	if !strings.Contains(l, "restarted") || !strings.Contains(l, "left_behind") {
		t.Errorf("the log does not show the output and what was killed:\n%s", l)
	}
	// Had the background sleep lived, it would still hold the output.
	if strings.Contains(l, "output_held") {
		t.Errorf("the background job was not killed:\n%s", l)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil || len(strings.TrimSpace(string(pid))) == 0 {
		t.Fatalf("no pid of the background job: %v", err)
	}
}

// The documented way to start a daemon from a heal: setsid runs in the
// foreground and puts a shell in a session of its own, which starts the
// daemon there and exits; the heal's group never holds the daemon, so no
// race with the heal's exit can kill it, and with its output elsewhere
// nothing waits for it either.
func TestHealCommandStartsADaemonTheDocumentedWay(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	logs := new(syncbuf.Buffer)
	logger := slog.New(slog.NewTextHandler(logs, nil))
	pidFile := filepath.Join(t.TempDir(), "pid")
	var pid int
	t.Cleanup(func() {
		if pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	heal := fmt.Sprintf("setsid sh -c 'sleep 1000 >/dev/null 2>&1 & echo $! >%s'; echo restarted", pidFile)
	if err := HealCommand(heal, logger)(context.Background()); err != nil {
		t.Fatalf("the heal returned %v", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
		t.Fatal(err)
	}
	// Alive, and no zombie, which an init that does not reap would keep.
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || strings.Contains(string(stat), ") Z ") {
		t.Errorf("the daemon did not outlive the heal: %q, %v", stat, err)
	}
	if l := logs.String(); strings.Contains(l, "left_behind") || strings.Contains(l, "output_held") {
		t.Errorf("the heal reported leftovers or a held output:\n%s", l)
	}
}

// A child that left the heal's process group and holds its output is not
// waited for beyond healOutputWait, does not turn success into failure,
// and lives on: what it writes later is read and dropped, never a SIGPIPE.
func TestHealCommandWithADetachedChild(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	logs := new(syncbuf.Buffer)
	logger := slog.New(slog.NewTextHandler(logs, nil))
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	fifos := map[string]string{}
	for _, name := range []string{"pid", "go", "result"} {
		fifos[name] = filepath.Join(dir, name+".fifo")
		if err := syscall.Mkfifo(fifos[name], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The heal returns once the child has left its group: it reads the
	// child's pid from a FIFO the child writes after setsid. The child
	// then waits for the test's go, writes to the heal's output, and says
	// it is alive.
	heal := fmt.Sprintf("setsid sh -c 'echo $$ >%[1]s; read x <%[2]s; echo more output; echo alive >%[3]s' & "+
		"read pid <%[1]s; echo $pid >%[4]s; echo restarted", fifos["pid"], fifos["go"], fifos["result"], pidFile)
	err := HealCommand(heal, logger)(context.Background())
	if err != nil {
		t.Fatalf("a heal that exits 0 returned %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "restarted") || !strings.Contains(l, "output_held") {
		t.Errorf("the log does not show the output and the held pipe:\n%s", l)
	}

	// Read and write ends open without waiting for the other side.
	result, err := os.OpenFile(fifos["result"], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer result.Close()
	if err := os.WriteFile(fifos["go"], []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	result.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, 16)
	n, err := result.Read(b)
	if got := strings.TrimSpace(string(b[:n])); got != "alive" {
		t.Errorf("the detached child did not outlive its next write to the heal's output: read %q, %v", got, err)
	}
}
