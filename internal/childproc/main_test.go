package childproc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
)

// childEnv, when set, makes the test binary a child of the fleets under
// test: it runs testChild, as told by its configuration, and exits without
// running tests.
const childEnv = "CHILDPROC_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		err := childproc.RunChild(ctx, os.Stdin, os.Stdout, testChild)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "test child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Children built with -race would otherwise sleep a second at exit.
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	goleak.VerifyTestMain(m)
}

// testConfig tells a test child how to behave.
type testConfig struct {
	Mode string `json:"mode"`
}

// stoppedReport is what a serving child reports once it is stopped.
const stoppedReport = -1

// testChild behaves as c.Mode says. Its reports are ints: the count it was
// broadcast, or stoppedReport.
func testChild(ctx context.Context, c testConfig, p *childproc.Parent[int]) error {
	switch c.Mode {
	case "fail-before-ready":
		return errors.New("cannot set up")
	case "exit-before-ready":
		os.Exit(3)
	case "hang":
		<-ctx.Done()
		return nil
	}
	p.Ready()
	switch c.Mode {
	case "serve": // until stopped
		<-ctx.Done()
		p.Send(stoppedReport)
		return nil
	case "echo", "fail-later", "exit":
		var n int
		if err := p.Receive(ctx, &n); err != nil {
			return fmt.Errorf("no broadcast: %w", err)
		}
		if c.Mode == "fail-later" {
			return errors.New("broke")
		}
		if c.Mode == "echo" {
			p.Send(n)
		}
		return nil
	}
	return fmt.Errorf("unknown mode %q", c.Mode)
}
