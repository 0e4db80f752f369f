package exclusive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain takes turns at a lock of its own: the machine's is held for
// minutes by the loaded tests of the packages beside this one.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "exclusive-test")
	if err != nil {
		panic(err)
	}
	lockFile = filepath.Join(dir, "machine.lock")
	code := m.Run()
	os.RemoveAll(dir)
	if err := goleak.Find(); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// One turn at a time: a second caller waits until the first gives the
// turn back, and a wait that its context ends says so.
func TestOneTurnAtATime(t *testing.T) {
	release, err := Lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*poll)
	defer cancel()
	if _, err := Lock(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second turn while the first is held: %v, want the wait cut short", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := Lock(t.Context())
		if err == nil {
			r()
		}
		got <- err
	}()
	release()
	release() // twice is harmless
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn given back never reached the waiting caller")
	}
}

// Machine gives the turn back when its test ends.
func TestMachineGivesItBackWhenTheTestEnds(t *testing.T) {
	t.Run("holder", func(t *testing.T) { Machine(t) })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	release, err := Lock(ctx)
	if err != nil {
		t.Fatalf("after the holder ended: %v", err)
	}
	release()
}
