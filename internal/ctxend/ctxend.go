// Package ctxend tells whether a context has ended without blocking.
package ctxend

import "context"

// Ended reports whether ctx has ended. Unlike ctx.Err, it never blocks, even
// on the contexts of clockwork's fake clock, whose Err takes the clock's lock.
func Ended(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// Err returns ctx.Err() once ctx has ended and nil before, without calling
// ctx.Err on a live context.
func Err(ctx context.Context) error {
	if Ended(ctx) {
		return ctx.Err()
	}
	return nil
}
