// Package safely calls code the project does not control (a user's check,
// a heal) so that its panic becomes an error instead of taking the health
// server or the load run down.
package safely

import (
	"context"
	"fmt"
)

// Call returns fn(ctx), or, when fn panics, an error wrapping panicked and
// saying what the panic was.
func Call(ctx context.Context, fn func(context.Context) error, panicked error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", panicked, p)
		}
	}()
	return fn(ctx)
}

// A Checker is anything with a Check method, as a check.Checker is.
type Checker interface {
	Check(ctx context.Context) error
}

// Check returns c.Check(ctx), or, when it panics, an error wrapping
// panicked. Unlike Call(ctx, c.Check, panicked), whose method value is
// taken before Call can recover, a nil c is reported rather than crashing.
func Check(ctx context.Context, c Checker, panicked error) error {
	return Call(ctx, func(ctx context.Context) error { return c.Check(ctx) }, panicked)
}
