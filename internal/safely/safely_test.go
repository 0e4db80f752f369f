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
