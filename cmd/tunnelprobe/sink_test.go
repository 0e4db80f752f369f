package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen/sink"
)

// When sink or load re-execute themselves for --procs, os.Executable is
// this test binary. This hook makes it behave as tunnelprobe for those
// children, before the testing package parses its flags, so that --procs
// is tested with real child processes of the code under test. No test is
// ever started with childMode as its second argument.
func init() {
	if len(os.Args) < 3 || os.Args[2] != childMode {
		return
	}
	command := map[string]func(context.Context, []string, func(string) string, io.Writer, io.Writer) int{
		"sink": sinkCommand, "load": loadCommand,
	}[os.Args[1]]
	if command == nil {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := command(ctx, os.Args[2:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// noEnv is an empty environment, for commands run by tests.
func noEnv(string) string { return "" }

// watchBuffer is a goroutine-safe writer whose content a test can wait
// for.
type watchBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newWatchBuffer() *watchBuffer { return &watchBuffer{changed: make(chan struct{}, 1)} }

func (w *watchBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
	return w.b.Write(p)
}

func (w *watchBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor returns the submatches of re once the content matches it.
func (w *watchBuffer) waitFor(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		if m := rx.FindStringSubmatch(w.String()); m != nil {
			return m
		}
		select {
		case <-w.changed:
		case <-deadline.C:
			t.Fatalf("no output matching %q in:\n%s", re, w.String())
		}
	}
}

// sinkRun is a sink command running in the test's process.
type sinkRun struct {
	addr, stats    string
	stdout, stderr *watchBuffer
	stop           func() int // cancels the sink and returns its exit code
}

func startSinkCommand(t *testing.T, args ...string) *sinkRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &sinkRun{stdout: newWatchBuffer(), stderr: newWatchBuffer()}
	done := make(chan int, 1)
	go func() { done <- sinkCommand(ctx, args, noEnv, s.stdout, s.stderr) }()
	var once sync.Once
	code := 0
	s.stop = func() int {
		once.Do(func() { cancel(); code = <-done })
		return code
	}
	t.Cleanup(func() { s.stop() })
	s.addr = s.stdout.waitFor(t, `listening on (\S+)`)[1]
	if strings.Contains(strings.Join(args, " "), "--stats") {
		s.stats = s.stdout.waitFor(t, `stats on (http://\S+)`)[1]
	}
	return s
}

// echoConns opens n connections to addr, writes size bytes on each and
// reads them back, so that the sink has counted them when it returns.
func echoConns(t *testing.T, addr string, n, size int) {
	t.Helper()
	payload := bytes.Repeat([]byte("x"), size)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(payload); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, size)); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}

// exitCounters parses the counters a sink prints on exit.
func exitCounters(t *testing.T, out string) (conns, bytesIn, bytesOut, procs int64) {
	t.Helper()
	m := regexp.MustCompile(`(\d+) connections, (\d+) bytes in, (\d+) bytes out, \d+ open at exit, (\d+) processes`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no counters on exit in:\n%s", out)
	}
	n := make([]int64, 4)
	for i := range n {
		n[i], _ = strconv.ParseInt(m[i+1], 10, 64)
	}
	return n[0], n[1], n[2], n[3]
}

// waitSinkStats polls the sink's stats until done holds, or fails the test
// after a safety bound; it returns the last stats read.
func waitSinkStats(t *testing.T, url string, done func(sink.Totals) bool) sink.Totals {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := getSinkStats(t, url)
		if done(st) || time.Now().After(deadline) {
			return st
		}
		runtime.Gosched()
	}
}

func getSinkStats(t *testing.T, url string) sink.Totals {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st sink.Totals
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSinkEcho(t *testing.T) {
	t.Parallel()
	s := startSinkCommand(t, "--listen", "127.0.0.1:0", "--echo", "--stats", "127.0.0.1:0")
	echoConns(t, s.addr, 3, 1000)
	// The echo came back, so the sink has read every byte; it counts what
	// it wrote only once its write returned, a moment after the client may
	// already have read it.
	st := waitSinkStats(t, s.stats, func(st sink.Totals) bool { return st.BytesOut == 3000 })
	if st.Conns != 3 || st.BytesIn != 3000 || st.BytesOut != 3000 || st.Processes != 1 {
		t.Errorf("stats %+v, want 3 connections, 3000 bytes each way, 1 process", st)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, s.stderr)
	}
	conns, in, out, procs := exitCounters(t, s.stdout.String())
	if conns != 3 || in != 3000 || out != 3000 || procs != 1 {
		t.Errorf("exit counters %d %d %d %d, want 3 3000 3000 1", conns, in, out, procs)
	}
}

// TestSinkProcs runs the sink over three processes on one port, two of them
// children, and checks that the counters add up over all of them.
func TestSinkProcs(t *testing.T) {
	t.Parallel()
	s := startSinkCommand(t, "--listen", "127.0.0.1:0", "--procs", "3", "--echo", "--stats", "127.0.0.1:0")
	const n, size = 30, 500
	echoConns(t, s.addr, n, size)
	st := waitSinkStats(t, s.stats, func(st sink.Totals) bool { return st.BytesOut == n*size })
	if st.Processes != 3 {
		t.Errorf("stats say %d processes, want 3", st.Processes)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("exit %d: %s", code, s.stderr)
	}
	// Children send their final counters as they exit: the sum is exact.
	conns, in, out, procs := exitCounters(t, s.stdout.String())
	if conns != n || in != n*size || out != n*size || procs != 3 {
		t.Errorf("exit counters %d %d %d %d, want %d %d %d 3", conns, in, out, procs, n, n*size, n*size)
	}
}

func TestSinkBadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--procs", "0"}, "-procs"},
		{[]string{"--procs", "x"}, "-procs"},
		{[]string{"--nope"}, "-nope"},
		{[]string{"extra"}, "extra"},
	} {
		var stdout, stderr bytes.Buffer
		code := sinkCommand(t.Context(), tc.args, noEnv, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.flag) {
			t.Errorf("sink %v: exit %d, stderr %q; want 2 naming %s", tc.args, code, stderr.String(), tc.flag)
		}
	}
}

func TestSinkEnvironment(t *testing.T) {
	t.Parallel()
	env := func(k string) string {
		return map[string]string{"TUNNELPROBE_SINK_LISTEN": "127.0.0.1:0", "TUNNELPROBE_SINK_PROCS": "zero"}[k]
	}
	var stdout, stderr bytes.Buffer
	if code := sinkCommand(t.Context(), nil, env, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "TUNNELPROBE_SINK_PROCS") {
		t.Errorf("exit %d, stderr %q; want 2 naming TUNNELPROBE_SINK_PROCS", code, stderr.String())
	}
}

func TestSinkPortInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stdout, stderr bytes.Buffer
	if code := sinkCommand(t.Context(), []string{"--listen", ln.Addr().String()}, noEnv, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "cannot listen") {
		t.Errorf("exit %d, want 1 saying it cannot listen; stderr %q", code, stderr.String())
	}
	// A sink that never listened has no counters to tell: they read as a
	// run that carried nothing.
	if strings.Contains(stdout.String(), "connections") {
		t.Errorf("printed counters of a sink that never listened: %q", stdout.String())
	}
}
