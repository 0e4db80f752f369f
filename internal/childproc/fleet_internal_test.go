package childproc

import (
	"context"
	"errors"
	"testing"
)

// The rule KeepGoing changes, without processes and their timing: once
// every child is ready a failure is recorded and joined but stops nothing;
// before, the first failure stops every child.
func TestFailWithKeepGoing(t *testing.T) {
	first, second := errors.New("child 1 broke"), errors.New("child 2 broke")
	for _, tc := range []struct {
		keepGoing, running bool
		wantStopped        bool
		want               []error
	}{
		{keepGoing: true, running: true, wantStopped: false, want: []error{first, second}},
		{keepGoing: true, running: false, wantStopped: true, want: []error{first}},
		{keepGoing: false, running: true, wantStopped: true, want: []error{first}},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		r := &fleetRun[int, int]{fl: Fleet[int, int]{KeepGoing: tc.keepGoing}, ctx: ctx, cancel: cancel}
		if tc.running {
			r.setRunning()
		}
		r.fail(first)
		r.fail(second)
		if stopped := ctx.Err() != nil; stopped != tc.wantStopped {
			t.Errorf("%+v: children stopped %v, want %v", tc, stopped, tc.wantStopped)
		}
		err := r.failure()
		for _, want := range tc.want {
			if !errors.Is(err, want) {
				t.Errorf("%+v: Run's error %v lacks %v", tc, err, want)
			}
		}
		if len(tc.want) == 1 && errors.Is(err, second) {
			t.Errorf("%+v: Run's error %v holds the failure that came after the stop", tc, err)
		}
		cancel(nil)
	}
}
