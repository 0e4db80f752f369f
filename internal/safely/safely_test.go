package safely

import (
	"context"
	"errors"
	"testing"
)

func TestCall(t *testing.T) {
	panicked := errors.New("check panicked")
	boom := errors.New("boom")
	if err := Call(context.Background(), func(context.Context) error { return boom }, panicked); err != boom {
		t.Errorf("an error: %v, want it as it was", err)
	}
	err := Call(context.Background(), func(context.Context) error { panic("nil map") }, panicked)
	if !errors.Is(err, panicked) || err.Error() != "check panicked: nil map" {
		t.Errorf("a panic: %v", err)
	}
}

type checkFunc func(context.Context) error

func (f checkFunc) Check(ctx context.Context) error { return f(ctx) }

type valueChecker struct{}

func (valueChecker) Check(context.Context) error { return nil }

// A nil checker, the interface or a nil pointer to a value-receiver type,
// is a failed check, not a crash.
func TestCheckNil(t *testing.T) {
	panicked := errors.New("check panicked")
	var nilPointer *valueChecker
	for _, c := range []Checker{nil, nilPointer, checkFunc(nil)} {
		if err := Check(context.Background(), c, panicked); !errors.Is(err, panicked) {
			t.Errorf("%T(nil): %v, want it reported as a panic", c, err)
		}
	}
}
