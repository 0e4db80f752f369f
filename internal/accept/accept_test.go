package accept_test

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/tunnelprobe/tunnelprobe/internal/accept"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// flaky is a listener whose Accept returns errs in turn, then conns.
type flaky struct {
	net.Listener
	errs  []error
	conns chan net.Conn
}

func (f *flaky) Accept() (net.Conn, error) {
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return nil, err
	}
	c, ok := <-f.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}

func emfile() error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
}

func TestNextRidesOutTransientErrors(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	ln := &flaky{errs: []error{emfile(), emfile(), emfile(), syscall.ECONNABORTED}, conns: make(chan net.Conn, 1)}
	ln.conns <- a
	c, err := accept.Next(context.Background(), ln)
	if err != nil || c != a {
		t.Fatalf("Next = %v, %v; want the connection after the transient errors", c, err)
	}
}

func TestNextReturnsPermanentErrors(t *testing.T) {
	ln := &flaky{conns: make(chan net.Conn)}
	close(ln.conns)
	if _, err := accept.Next(context.Background(), ln); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Next on a closed listener = %v, want net.ErrClosed", err)
	}
}

func TestNextStopsBackingOffWhenCtxEnds(t *testing.T) {
	errs := make([]error, 100)
	for i := range errs {
		errs[i] = emfile()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ln := &flaky{errs: errs}
	if _, err := accept.Next(ctx, ln); !errors.Is(err, context.Canceled) {
		t.Errorf("Next = %v, want context.Canceled", err)
	}
	if len(ln.errs) != 99 {
		t.Errorf("Accept was called %d times after ctx ended, want once", 100-len(ln.errs))
	}
}
