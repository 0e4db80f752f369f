package check

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/tunnelprobe/tunnelprobe/internal/safely"

	"github.com/tunnelprobe/tunnelprobe/internal/ctxend"
)

// ErrNoChecks is returned by a combination of no checks. A health check that
// checks nothing must not report healthy, so AllOf() fails like AnyOf().
var ErrNoChecks = errors.New("no checks configured")

// AnyOf returns a Checker that passes as soon as one of checks passes. It
// suits a list of targets of which any one answering proves the tunnel (the
// reference's startup check): one target down for its own reasons must not
// fail the tunnel.
//
// The checks run concurrently. The first pass cancels the context of the
// others, and Check returns only once every one of them has returned, so no
// check outlives the call. When none passes, the error joins every failure
// (errors.Join), in the order of checks. A check that panics counts as a
// failure wrapping ErrPanicked. With no checks, Check returns
// ErrNoChecks.
func AnyOf(checks ...Checker) Checker { return anyOf(slices.Clone(checks)) }

// AllOf returns a Checker that passes when every one of checks passes, for a
// tunnel that must reach several places (a DNS server and an API, say).
//
// The checks run concurrently. The first failure cancels the context of the
// others, and Check returns only once every one of them has returned. The
// error joins the failures in the order of checks, leaving out the
// cancellations that the first failure caused; when ctx itself ended, every
// failure is kept. A check that panics counts as a failure wrapping
// ErrPanicked. With no checks, Check returns ErrNoChecks.
func AllOf(checks ...Checker) Checker { return allOf(slices.Clone(checks)) }

type anyOf []Checker

var _ Checker = anyOf(nil)

func (checks anyOf) Check(ctx context.Context) error {
	if len(checks) == 0 {
		return ErrNoChecks
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		wg     sync.WaitGroup
		passed atomic.Bool
		errs   = make([]error, len(checks)) // errs[i] is written by goroutine i only
	)
	for i, c := range checks {
		wg.Go(func() {
			if err := safely.Check(ctx, c, ErrPanicked); err != nil {
				errs[i] = err
				return
			}
			passed.Store(true)
			cancel()
		})
	}
	// Wait even after a pass: the losers are cancelled but may still hold a
	// connection, and the caller is promised that nothing outlives Check.
	// wg.Wait also orders the writes to errs before the reads below.
	wg.Wait()
	if passed.Load() {
		return nil
	}
	return errors.Join(errs...)
}

type allOf []Checker

var _ Checker = allOf(nil)

func (checks allOf) Check(ctx context.Context) error {
	if len(checks) == 0 {
		return ErrNoChecks
	}
	g, gctx := errgroup.WithContext(ctx)
	errs := make([]error, len(checks)) // errs[i] is written by goroutine i only
	for i, c := range checks {
		g.Go(func() error {
			errs[i] = safely.Check(gctx, c, ErrPanicked)
			return errs[i]
		})
	}
	first := g.Wait()
	if first == nil {
		return nil
	}
	// The group cancelled gctx at the first failure. A check that then
	// failed with context.Canceled only reports that cancellation, unless
	// ctx itself ended, in which case the caller must see why each failed.
	callerEnded := ctxend.Ended(ctx)
	kept := errs[:0]
	for _, err := range errs {
		if err == nil || (!callerEnded && errors.Is(err, context.Canceled)) {
			continue
		}
		kept = append(kept, err)
	}
	if len(kept) == 0 {
		// The first failure was itself a cancellation, from the check's
		// own doing: it must still fail the check.
		return first
	}
	return errors.Join(kept...)
}
