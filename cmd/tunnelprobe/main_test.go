package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Children of `load --procs` are this test binary; built with -race,
	// each would sleep a second at exit (GORACE atexit_sleep_ms) and make
	// stopping times depend on the race detector rather than on the code.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	dir, err := os.MkdirTemp("", "tunnelprobe-test-bin-")
	if err != nil {
		panic(err)
	}
	binaryDir = dir
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

func TestRunHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"-help"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, noEnv, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d, want 0; stderr: %s", code, &stderr)
			}
			for _, c := range commands {
				if !strings.Contains(stdout.String(), c.Name) {
					t.Errorf("usage does not list %q:\n%s", c.Name, &stdout)
				}
			}
			if stderr.Len() != 0 {
				t.Errorf("help wrote to stderr: %s", &stderr)
			}
		})
	}
}

func TestRunHelpCommand(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"help", "serve"}, noEnv, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", code, &stderr)
	}
	if !strings.Contains(stdout.String(), "--listen") {
		t.Errorf("help serve does not show the serve flags:\n%s", &stdout)
	}
}

func TestRunUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command"},
		{"unknown command", []string{"bogus"}, `unknown command "bogus"`},
		{"help unknown command", []string{"help", "bogus"}, `unknown command "bogus"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tt.args, noEnv, &stdout, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tt.want) || !strings.Contains(stderr.String(), "Usage:") {
				t.Errorf("stderr does not say %q with the usage:\n%s", tt.want, &stderr)
			}
			if stdout.Len() != 0 {
				t.Errorf("usage error wrote to stdout: %s", &stdout)
			}
		})
	}
}

// envMap is a getenv reading m.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
