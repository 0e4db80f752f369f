package middleware_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

func TestCoalesceObserverSeesEveryJoin(t *testing.T) {
	const callers = 20
	release := make(chan struct{})
	slow := heldUntil(release)
	var (
		mu      sync.Mutex
		joins   []int
		started atomic.Int64
	)
	obs := middleware.ObserverFuncs{
		OnCheckStarted: func(middleware.CheckStart) { started.Add(1) },
		OnCheckJoined: func(j middleware.CheckJoin) {
			if j.Time.IsZero() {
				t.Error("CheckJoin.Time is zero")
			}
			mu.Lock()
			joins = append(joins, j.Callers)
			mu.Unlock()
		},
	}
	m, err := middleware.New(slow, middleware.Config{Mode: middleware.ModeProbe, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	var joined atomic.Int64
	allJoined := make(chan struct{})
	// The hook runs after the observer has been told of the join.
	middleware.SetJoinHook(m, func() {
		if joined.Add(1) == callers {
			close(allJoined)
		}
	})
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			if r := m.Probe(ctx); !r.Passed() {
				t.Errorf("probe: %v", r.Err)
			}
		})
	}
	select {
	case <-allJoined:
	case <-time.After(hangGuard):
		t.Fatalf("only %d of %d callers joined", joined.Load(), callers)
	}
	close(release)
	wg.Wait()

	if n := started.Load(); n != 1 {
		t.Errorf("%d checks started, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(joins)
	var want []int
	for n := 2; n <= callers; n++ {
		want = append(want, n)
	}
	// The first caller starts the check; each other one joins it, and
	// nobody leaves before the check ends, so they see 2, 3, ... callers.
	if !slices.Equal(joins, want) {
		t.Errorf("joins saw callers %v, want %v", joins, want)
	}
}

func TestPlainObserverIsNotToldOfJoins(t *testing.T) {
	// An Observer without CheckJoined works as before: nothing to assert
	// but that sharing a check neither panics nor blocks.
	release := make(chan struct{})
	var finished atomic.Int64
	m, err := middleware.New(check.Func(func(ctx context.Context) error {
		<-release
		return nil
	}), middleware.Config{Mode: middleware.ModeProbe, Observer: middleware.ObserverFuncs{
		OnCheckFinished: func(middleware.Result) { finished.Add(1) },
	}})
	if err != nil {
		t.Fatal(err)
	}
	allJoined := make(chan struct{})
	var joined atomic.Int64
	middleware.SetJoinHook(m, func() {
		if joined.Add(1) == 2 {
			close(allJoined)
		}
	})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { m.Probe(context.Background()) })
	}
	select {
	case <-allJoined:
	case <-time.After(hangGuard):
		t.Fatal("the callers did not join")
	}
	close(release)
	wg.Wait()
	if n := finished.Load(); n != 1 {
		t.Errorf("%d checks finished, want 1", n)
	}
}
