package exclusive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// lockFile is the file whose lock is the turn.
var lockFile = filepath.Join(os.TempDir(), "tunnelprobe-machine.lock")

// poll is how often a waiting caller tries the lock again.
const poll = 100 * time.Millisecond

// Machine blocks until t has the machine's turn and gives it back when t
// ends. t fails when its deadline (go test -timeout) is a minute away
// first, in time for its cleanups.
func Machine(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Minute))
		defer cancel()
	}
	release, err := Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
}

// Lock blocks until the caller has the machine's turn, or ctx ends. The
// returned func gives the turn back; it may be called more than once.
func Lock(ctx context.Context) (release func(), err error) {
	f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("the machine's turn: %w", err)
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("the machine's turn: %s: %w", lockFile, err)
		}
		if ok {
			// Closing the file gives the lock back.
			return sync.OnceFunc(func() { f.Close() }), nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the machine's turn: %w", context.Cause(ctx))
		case <-tick.C:
		}
	}
}
