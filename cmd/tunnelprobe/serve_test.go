package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/cmd/tunnelprobe/internal/serveflags"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
	"github.com/tunnelprobe/tunnelprobe/internal/syncbuf"
	"github.com/tunnelprobe/tunnelprobe/internal/testcert"
	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
)

// tlsTarget starts an HTTPS server with a fresh test CA and returns its
// address and a file holding the CA.
func tlsTarget(t *testing.T) (addr, caFile string) {
	t.Helper()
	b := testcert.Must(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = b.ServerConfig()
	// A tcp or tls check closes without a request; that is no news.
	srv.Config.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, b.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.Listener.Addr().String(), caFile
}

// stallingTarget returns the address of a listener that accepts connections
// and never answers, and a channel that receives each accepted connection.
func stallingTarget(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 16)
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), accepted
}

// runningCommand is a command (serve, mostly) running in the test's process.
type runningCommand struct {
	url    string
	stderr *syncbuf.Buffer
	cancel context.CancelFunc
	done   chan int

	once sync.Once
	code int
}

// startServe runs serve with args (after --listen 127.0.0.1:0) and the
// environment env, and returns once it listens. The test's cleanup stops it.
func startServe(t *testing.T, env map[string]string, args ...string) *runningCommand {
	t.Helper()
	args = append([]string{"--listen", "127.0.0.1:0"}, args...)
	return startCommand(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return serveCommand(ctx, args, envMap(env), stdout, stderr)
	})
}

func startCommand(t *testing.T, run func(ctx context.Context, stdout, stderr io.Writer) int) *runningCommand {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &runningCommand{stderr: new(syncbuf.Buffer), cancel: cancel, done: make(chan int, 1)}
	pr, pw := io.Pipe()
	go func() {
		code := run(ctx, pw, s.stderr)
		pw.Close()
		s.done <- code
	}()
	t.Cleanup(func() { s.stop(t) })

	// The address line is the sync point: serve prints it once it listens.
	line, err := bufio.NewReader(pr).ReadString('\n')
	// Nothing more is expected on stdout; drain it anyway so that serve
	// never blocks on it. The copy ends when serve returns.
	go io.Copy(io.Discard, pr)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "tunnelprobe serve: listening on ")
	if err != nil || !ok {
		t.Fatalf("serve did not print its address (stdout %q, %v); exit %d; stderr:\n%s", line, err, s.stop(t), s.stderr)
	}
	s.url = "http://" + addr
	return s
}

// stop cancels serve's context and returns its exit code.
func (s *runningCommand) stop(t *testing.T) int {
	t.Helper()
	s.once.Do(func() {
		s.cancel()
		select {
		case s.code = <-s.done:
		case <-time.After(10 * time.Second):
			t.Errorf("serve did not return within 10s of its context's end; stderr:\n%s", s.stderr)
			s.code = -1
		}
	})
	return s.code
}

// get GETs path from s and returns the status code and body.
func (s *runningCommand) get(t *testing.T, path string) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 15 * time.Second}
	resp, err := client.Get(s.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// waitHealthy long-polls the status endpoint until it reports healthy.
func (s *runningCommand) waitHealthy(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := s.get(t, "/?wait=5s")
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status still %d after 10s: %s; stderr:\n%s", code, body, s.stderr)
		}
	}
}

func TestServeLoopHealthy(t *testing.T) {
	t.Parallel()
	addr, ca := tlsTarget(t)
	s := startServe(t, nil, "--target", addr, "--tls-ca", ca, "--timeouts", "reference")
	s.waitHealthy(t)
	if code, body := s.get(t, "/check/"); code != http.StatusOK {
		t.Errorf("/check/ = %d %q, want 200", code, body)
	}
	if code := s.stop(t); code != 0 {
		t.Errorf("exit %d after cancel, want 0; stderr:\n%s", code, s.stderr)
	}
	if !strings.Contains(s.stderr.String(), "health state changed") {
		t.Errorf("no state change logged:\n%s", s.stderr)
	}
}

// A CA file rotated under a running serve (a mounted secret, or the lab's
// server peer restarted with a new CA) is read again: the checks of a
// target of the new CA pass without a restart of serve.
func TestServeFollowsARotatedCA(t *testing.T) {
	t.Parallel()
	addr, ca := tlsTarget(t)
	_, otherCA := tlsTarget(t)
	rotated, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(otherCA)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, other, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, nil, "--mode", "probe", "--target", addr, "--tls-ca", ca)
	if code, body := s.get(t, "/check/"); code != http.StatusServiceUnavailable || !strings.Contains(body, "certificate") {
		t.Fatalf("/check/ with another CA in the file = %d %q, want 503 naming the certificate", code, body)
	}
	if err := os.WriteFile(ca, rotated, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, body := s.get(t, "/check/"); code != http.StatusOK {
		t.Errorf("/check/ after the file rotated to the target's CA = %d %q, want 200", code, body)
	}
	s.stop(t)
}

func TestServeCheck(t *testing.T) {
	t.Parallel()
	good, ca := tlsTarget(t)
	refused := testnet.RefusedAddr(t)
	stalling, _ := stallingTarget(t)
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"tls", []string{"--target", good, "--tls-ca", ca}, http.StatusOK},
		{"tls insecure", []string{"--target", good, "--tls-insecure"}, http.StatusOK},
		{"tls unknown CA", []string{"--target", good}, http.StatusServiceUnavailable},
		{"tcp", []string{"--check", "tcp", "--target", good}, http.StatusOK},
		{"http", []string{"--check", "http", "--target", "https://" + good + "/", "--tls-ca", ca}, http.StatusOK},
		{"tcp refused", []string{"--check", "tcp", "--target", refused}, http.StatusServiceUnavailable},
		{"tls refused", []string{"--target", refused, "--tls-ca", ca}, http.StatusServiceUnavailable},
		{"any of targets", []string{"--target", refused, "--target", good, "--tls-ca", ca}, http.StatusOK},
		{"max check timeout", []string{"--target", stalling, "--max-check-timeout", "50ms"}, http.StatusServiceUnavailable},
		// A target with a scheme says its own kind, whatever --check says.
		{"tcp scheme", []string{"--target", "tcp://" + refused}, http.StatusServiceUnavailable},
		{"mixed schemes", []string{"--check", "tcp", "--target", "tcp://" + refused, "--target", "tls://" + good, "--tls-ca", ca}, http.StatusOK},
		{"https scheme", []string{"--target", "https://" + good + "/", "--tls-ca", ca}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := startServe(t, nil, append([]string{"--mode", "probe"}, tt.args...)...)
			if code, body := s.get(t, "/check/"); code != tt.want {
				t.Errorf("/check/ = %d %q, want %d", code, body, tt.want)
			}
		})
	}
}

func TestServeHideErrors(t *testing.T) {
	t.Parallel()
	refused := testnet.RefusedAddr(t)
	s := startServe(t, nil, "--mode", "probe", "--check", "tcp", "--target", refused, "--hide-errors")
	code, body := s.get(t, "/check/")
	if code != http.StatusServiceUnavailable || strings.Contains(body, refused) {
		t.Errorf("/check/ = %d %q, want 503 without the target", code, body)
	}
	if !strings.Contains(s.stderr.String(), refused) {
		t.Errorf("the error is not logged:\n%s", s.stderr)
	}
}

func TestServeEnvironment(t *testing.T) {
	t.Parallel()
	good, ca := tlsTarget(t)
	refused := testnet.RefusedAddr(t)

	t.Run("from environment", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, map[string]string{
			"TUNNELPROBE_MODE":       "probe",
			"TUNNELPROBE_TARGET":     refused + "," + good,
			"TUNNELPROBE_TLS_CA":     ca,
			"TUNNELPROBE_LOG_FORMAT": "json",
		})
		// In probe mode nothing checks before /check/ is called.
		if code, body := s.get(t, "/?format=json"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"mode": "probe"`) {
			t.Errorf("status = %d %s, want 503 in probe mode", code, body)
		}
		if code, body := s.get(t, "/check/"); code != http.StatusOK {
			t.Errorf("/check/ = %d %q, want 200", code, body)
		}
		if !strings.Contains(s.stderr.String(), `"msg":"serving health endpoints"`) {
			t.Errorf("logs are not JSON:\n%s", s.stderr)
		}
	})
	t.Run("command line wins", func(t *testing.T) {
		t.Parallel()
		s := startServe(t, map[string]string{
			"TUNNELPROBE_MODE":   "probe",
			"TUNNELPROBE_TARGET": refused,
			"TUNNELPROBE_TLS_CA": ca,
		}, "--mode", "loop", "--target", good)
		s.waitHealthy(t) // only the loop checks before /check/ is called
		if code, body := s.get(t, "/?format=json"); !strings.Contains(body, `"mode": "loop"`) {
			t.Errorf("status = %d %s, want loop mode", code, body)
		}
	})
}

// TestServeOSEnvironment runs the binary's dispatcher, which reads the
// process environment.
func TestServeOSEnvironment(t *testing.T) {
	good, ca := tlsTarget(t)
	t.Setenv("TUNNELPROBE_LISTEN", "127.0.0.1:0")
	t.Setenv("TUNNELPROBE_MODE", "probe")
	t.Setenv("TUNNELPROBE_TLS_CA", ca)
	s := startCommand(t, func(ctx context.Context, stdout, stderr io.Writer) int {
		return run(ctx, []string{"serve", "--target", good}, os.Getenv, stdout, stderr)
	})
	if code, body := s.get(t, "/check/"); code != http.StatusOK {
		t.Errorf("/check/ = %d %q, want 200", code, body)
	}
}

func TestServeBadUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string // in stderr
	}{
		{"mode", []string{"--mode", "bogus"}, nil, []string{"--mode"}},
		{"malformed listen", []string{"--listen", "nonsense"}, nil, []string{"--listen", "host:port"}},
		{"listen port", []string{"--listen", ":99999"}, nil, []string{"--listen", "99999"}},
		{"env listen", nil, map[string]string{"TUNNELPROBE_LISTEN": "nonsense"}, []string{"--listen", "TUNNELPROBE_LISTEN"}},
		{"heal timeout", []string{"--heal-timeout", "0"}, nil, []string{"--heal-timeout"}},
		{"negative period", []string{"--period", "-1s"}, nil, []string{"-period"}},
		{"zero timeout", []string{"--timeout", "0"}, nil, []string{"-timeout"}},
		{"timeout and timeouts", []string{"--timeout", "1s", "--timeouts", "2s,4s"}, nil, []string{"--timeout", "--timeouts"}},
		{"bad ladder", []string{"--timeouts", "2s,x"}, nil, []string{"-timeouts"}},
		{"check kind", []string{"--check", "ftp"}, nil, []string{"-check"}},
		{"failure threshold", []string{"--failure-threshold", "-1"}, nil, []string{"-failure-threshold"}},
		{"missing CA file", []string{"--tls-ca", filepath.Join(t.TempDir(), "missing.pem")}, nil, []string{"-tls-ca"}},
		{"unknown flag", []string{"--bogus"}, nil, []string{"--bogus"}},
		{"positional argument", []string{"--mode", "probe", "stray"}, nil, []string{`"stray"`}},
		{"log level", []string{"--log-level", "loud"}, nil, []string{"-log-level"}},
		{"http target not a URL", []string{"--check", "http", "--target", "example.com:80"}, nil, []string{"--target"}},
		{"tls target with a path", []string{"--target", "example.com/health"}, nil, []string{"--target", "nothing after the port"}},
		{"unknown scheme", []string{"--target", "ftp://example.com"}, nil, []string{"--target", "unknown scheme"}},
		{"env mode", nil, map[string]string{"TUNNELPROBE_MODE": "bogus"}, []string{"--mode", "TUNNELPROBE_MODE"}},
		{"env period", nil, map[string]string{"TUNNELPROBE_PERIOD": "fast"}, []string{"--period", "TUNNELPROBE_PERIOD"}},
		{"env threshold", nil, map[string]string{"TUNNELPROBE_FAILURE_THRESHOLD": "0"}, []string{"--failure-threshold", "TUNNELPROBE_FAILURE_THRESHOLD"}},
		{"env bool", nil, map[string]string{"TUNNELPROBE_HIDE_ERRORS": "yes please"}, []string{"--hide-errors", "TUNNELPROBE_HIDE_ERRORS"}},
		{"heal request method", []string{"--heal-http", "post http://127.0.0.1:1/"}, nil, []string{"--heal-http", "METHOD URL"}},
		{"heal request URL", []string{"--heal-http", "POST /restart"}, nil, []string{"--heal-http", "absolute http"}},
		{"heal header alone", []string{"--heal-header", "X-API-Key: k"}, nil, []string{"--heal-header", "--heal-http"}},
		{"heal header malformed", []string{"--heal-http", "POST http://127.0.0.1:1/", "--heal-header", "X-API-Key"}, nil, []string{"--heal-header", "Name: value"}},
		{"heal header empty value", []string{"--heal-http", "POST http://127.0.0.1:1/", "--heal-header", "X-API-Key: "}, nil, []string{"--heal-header", "non-empty"}},
		{"heal header bad name", []string{"--heal-http", "POST http://127.0.0.1:1/", "--heal-header", "X API Key: s3cret"}, nil, []string{"--heal-header", "not shown"}},
		{"echo target without the preset", []string{"--echo-target", "10.0.0.1"}, nil, []string{"--echo-target", "--preset upstream"}},
		{"heal command and requests", []string{"--heal-cmd", "true", "--heal-http", "POST http://127.0.0.1:1/"}, nil, []string{"--heal-cmd", "--heal-http"}},
		{"env timeout and timeouts", nil, map[string]string{"TUNNELPROBE_TIMEOUT": "1s", "TUNNELPROBE_TIMEOUTS": "2s"}, []string{"TUNNELPROBE_TIMEOUTS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout bytes.Buffer
			stderr := new(syncbuf.Buffer)
			// Should a bad input slip through, serve would listen: the
			// context ends it at once rather than hanging the test.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			args := tt.args
			if tt.env["TUNNELPROBE_LISTEN"] == "" {
				args = append([]string{"--listen", "127.0.0.1:0"}, args...)
			}
			if code := serveCommand(ctx, args, envMap(tt.env), &stdout, stderr); code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr does not name %q:\n%s", w, stderr)
				}
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q, want nothing", &stdout)
			}
		})
	}
}

// TestServeFlagsConfig checks the monitor configuration the flags make.
func TestServeFlagsConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		args         []string
		env          map[string]string
		wantMode     middleware.Mode
		wantTimeouts []time.Duration
		wantFailures int
	}{
		{"defaults", nil, nil, middleware.ModeLoop, []time.Duration{middleware.DefaultTimeout}, 1},
		{
			"environment", nil,
			map[string]string{"TUNNELPROBE_MODE": "auto", "TUNNELPROBE_TIMEOUTS": "1s,2s", "TUNNELPROBE_FAILURE_THRESHOLD": "3"},
			middleware.ModeAuto, []time.Duration{time.Second, 2 * time.Second}, 3,
		},
		{
			// --timeout on the command line overrides the ladder in the
			// environment rather than clashing with it.
			"flag timeout over env timeouts", []string{"--timeout", "3s", "--mode", "probe"},
			map[string]string{"TUNNELPROBE_MODE": "auto", "TUNNELPROBE_TIMEOUTS": "1s,2s"},
			middleware.ModeProbe, []time.Duration{3 * time.Second}, 1,
		},
		{
			"flag timeouts over env timeout", []string{"--timeouts", "reference"},
			map[string]string{"TUNNELPROBE_TIMEOUT": "1s"},
			middleware.ModeLoop, preset.ReferenceTimeouts, 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var f serveflags.Flags
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f.Register(fs)
			if err := cliflag.Parse(fs, tt.args, envMap(tt.env), serveflags.Exclusive...); err != nil {
				t.Fatal(err)
			}
			sc, err := f.ServerConfig(fs, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			cfg := sc.Monitor
			if cfg.Mode != tt.wantMode || !slices.Equal(cfg.Timeouts, tt.wantTimeouts) || cfg.FailureThreshold != tt.wantFailures {
				t.Errorf("got mode %v, timeouts %v, threshold %d; want %v, %v, %d",
					cfg.Mode, cfg.Timeouts, cfg.FailureThreshold, tt.wantMode, tt.wantTimeouts, tt.wantFailures)
			}
			if cfg.Heal != nil {
				t.Error("a heal without --heal-cmd")
			}
		})
	}
}

func TestServeHelp(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := serveCommand(context.Background(), []string{"--help"}, envMap(nil), &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", code, &stderr)
	}
	var f serveflags.Flags
	fs := flag.NewFlagSet("tunnelprobe serve", flag.ContinueOnError)
	f.Register(fs)
	help := stdout.String()
	fs.VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(help, "--"+fl.Name+" ") && !strings.Contains(help, "--"+fl.Name+"\n") {
			t.Errorf("help lacks --%s", fl.Name)
		}
		if env := "[$" + cliflag.EnvName(fs, fl.Name) + "]"; !strings.Contains(help, env) {
			t.Errorf("help lacks %s", env)
		}
	})
}

func TestServeListenError(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stdout, stderr bytes.Buffer
	code := serveCommand(context.Background(), []string{"--listen", ln.Addr().String()}, envMap(nil), &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "cannot listen on "+ln.Addr().String()) {
		t.Errorf("stderr does not explain: %s", &stderr)
	}
}

// TestServeShutdownDuringCheck cancels serve while a /check/ waits for a
// target that never answers.
func TestServeShutdownDuringCheck(t *testing.T) {
	t.Parallel()
	stalling, accepted := stallingTarget(t)
	s := startServe(t, nil, "--mode", "probe", "--target", stalling)

	type answer struct {
		code int
		body string
		err  error
	}
	answers := make(chan answer, 1)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	go func() {
		resp, err := client.Get(s.url + "/check/")
		if err != nil {
			answers <- answer{err: err}
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers <- answer{code: resp.StatusCode, body: string(body), err: err}
	}()

	select {
	case <-accepted: // the check is in flight
	case <-time.After(10 * time.Second):
		t.Fatal("the check never reached the target")
	}
	start := time.Now()
	if code := s.stop(t); code != 0 {
		t.Errorf("exit %d, want 0; stderr:\n%s", code, s.stderr)
	}
	if d := time.Since(start); d > httpserve.ShutdownGrace/2 {
		t.Errorf("shutdown took %v", d)
	}
	select {
	case a := <-answers:
		// A closed connection is fine; an answer must not claim a pass.
		if a.err == nil && a.code == http.StatusOK {
			t.Errorf("/check/ cut short by the shutdown answered 200 %q", a.body)
		}
		t.Logf("client got: %d %q %v", a.code, a.body, a.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the client got no answer")
	}
}

func TestServeHealFlag(t *testing.T) {
	t.Parallel()
	var f serveflags.Flags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	f.Register(fs)
	heal := "touch /tmp/healed"
	if err := cliflag.Parse(fs, nil, envMap(map[string]string{"TUNNELPROBE_HEAL_CMD": heal})); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.ServerConfig(fs, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HealCommand != heal {
		t.Errorf("HealCommand %q, want %q", cfg.HealCommand, heal)
	}
	if cfg.Monitor.HealTimeout != middleware.DefaultHealTimeout {
		t.Errorf("HealTimeout %v by default, want %v", cfg.Monitor.HealTimeout, middleware.DefaultHealTimeout)
	}
	if err := cliflag.Parse(fs, []string{"--heal-timeout", "3s"}, envMap(nil)); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := f.ServerConfig(fs, io.Discard); cfg.Monitor.HealTimeout != 3*time.Second {
		t.Errorf("--heal-timeout 3s gave HealTimeout %v", cfg.Monitor.HealTimeout)
	}
}
