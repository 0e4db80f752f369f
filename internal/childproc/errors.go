package childproc

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrExitedBeforeReady is why a child that exits before it says it
	// is ready, without saying why, fails.
	ErrExitedBeforeReady = errors.New("exited before it was ready")
	// ErrExited is why a child of a Lasting fleet that exits before the
	// fleet is stopped fails.
	ErrExited = errors.New("exited")
)

// ChildError is the failure of one child of a Fleet.
type ChildError struct {
	// Index is the child's index in the configurations given to Run.
	Index int
	// Name is the child as Fleet.Name calls it, "load process 1".
	Name string
	// Err is what the child said, ErrExitedBeforeReady, ErrExited, its
	// exit status or a message the parent could not read.
	Err error
}

func (e *ChildError) Error() string {
	if errors.Is(e.Err, ErrExitedBeforeReady) || errors.Is(e.Err, ErrExited) {
		return e.Name + " " + e.Err.Error() // "load process 1 exited"
	}
	return e.Name + ": " + e.Err.Error()
}

func (e *ChildError) Unwrap() error { return e.Err }

// StartTimeoutError is Run's error when not every child is ready after
// the fleet's StartTimeout.
type StartTimeoutError struct {
	// Limit is the StartTimeout in force.
	Limit time.Duration
}

func (e *StartTimeoutError) Error() string {
	return fmt.Sprintf("children not ready after %v", e.Limit)
}
