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
