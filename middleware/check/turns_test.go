package check_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// named returns a check that appends name to *log and returns err.
// errDown is what a check of a tunnel that is down returns.
var errDown = errors.New("tunnel down")

func named(log *[]string, name string, err error) check.Checker {
	return check.Func(func(context.Context) error {
		*log = append(*log, name)
		return err
	})
}

func TestRoundRobinTakesEachInTurn(t *testing.T) {
	var log []string
	c := check.RoundRobin(named(&log, "a", nil), named(&log, "b", errDown), named(&log, "c", nil))
	var errs []bool
	for range 4 {
		errs = append(errs, c.Check(t.Context()) != nil)
	}
	if !slices.Equal(log, []string{"a", "b", "c", "a"}) || !slices.Equal(errs, []bool{false, true, false, false}) {
		t.Errorf("checks run %v with failures %v, want a, b, c, a with only b failing", log, errs)
	}
	if err := check.RoundRobin().Check(t.Context()); !errors.Is(err, check.ErrNoChecks) {
		t.Errorf("no checks: %v, want ErrNoChecks", err)
	}
}

func TestFallbackSwitchesForGoodOnItsError(t *testing.T) {
	var log []string
	var primaryErr error = errDown
	primary := check.Func(func(context.Context) error {
		log = append(log, "icmp")
		return primaryErr
	})
	c := check.Fallback(primary, check.ErrICMPNotPermitted, named(&log, "dns", nil))
	if err := c.Check(t.Context()); !errors.Is(err, errDown) {
		t.Errorf("another failure of the primary: %v, want it returned as is", err)
	}
	primaryErr = fmt.Errorf("socket: %w", check.ErrICMPNotPermitted)
	for range 2 {
		if err := c.Check(t.Context()); err != nil {
			t.Errorf("after the fallback: %v", err)
		}
	}
	if want := []string{"icmp", "icmp", "dns", "dns"}; !slices.Equal(log, want) {
		t.Errorf("checks run %v, want %v: the fallback in the same call, then for good", log, want)
	}
}
