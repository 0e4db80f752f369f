//go:build !linux

package reaper

import (
	"context"
	"errors"
	"fmt"
)

// Run returns an error at once: reaping needs Linux's /proc.
func (r *Reaper) Run(context.Context) error {
	return fmt.Errorf("reaper: %w", errors.ErrUnsupported)
}
