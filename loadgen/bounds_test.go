package loadgen_test

import (
	"context"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

func TestRunWithFarMoreConnectionsThanCanOpenEndsByItself(t *testing.T) {
	// A path where no dial ever completes, as a sink whose backlog is full:
	// each dial waits out DialTimeout.
	var most atomic.Int64
	stuck := check.DialerFunc(func(ctx context.Context, _, _ string) (net.Conn, error) {
		n := int64(runtime.NumGoroutine())
		for cur := most.Load(); n > cur && !most.CompareAndSwap(cur, n); cur = most.Load() {
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	const (
		dialTimeout = 200 * time.Millisecond
		hold        = 300 * time.Millisecond
	)
	before := runtime.NumGoroutine()
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Target: "127.0.0.1:9", Dialer: stuck, Conns: 100_000,
		DialTimeout: dialTimeout, Duration: hold,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The ramp ends DialTimeout after its schedule (all at once here),
	// whatever became of the 100,000 slots; then the hold.
	if limit := (dialTimeout + hold + 2*time.Second).Seconds(); res.DurationSeconds > limit {
		t.Errorf("the run took %.1f s, want the ramp's deadline and the hold (under %.1f s)", res.DurationSeconds, limit)
	}
	// Goroutines follow connections opened (none) and dials in flight,
	// not connections requested.
	if extra := most.Load() - int64(before); extra > 3*loadgen.MaxDialsInFlight {
		t.Errorf("%d goroutines during a run that opened nothing, want about %d (the dials in flight)", extra, 2*loadgen.MaxDialsInFlight)
	}
	if res.ConnsAchieved != 0 || res.ConnsRequested != 100_000 {
		t.Errorf("achieved %d of %d", res.ConnsAchieved, res.ConnsRequested)
	}
}

func TestRunOfFailingSlotsEndsWithTheirDials(t *testing.T) {
	// More slots than dial permits, every dial refused at once and never
	// retried: a slot that gives up hands its permit on, so the ramp ends
	// when the last dial has, not at its deadline.
	addr := testnet.RefusedAddr(t)
	const dialTimeout = time.Minute
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Target: addr, Conns: 4 * loadgen.MaxDialsInFlight, NoReconnect: true,
		DialTimeout: dialTimeout, Duration: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors["refused"] != 4*loadgen.MaxDialsInFlight {
		t.Errorf("errors %v, want every dial refused", res.Errors)
	}
	if limit := (dialTimeout / 2).Seconds(); res.DurationSeconds > limit {
		t.Errorf("the run took %.1f s: its ramp waited for permits the failed slots kept", res.DurationSeconds)
	}
}
