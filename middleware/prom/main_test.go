package prom_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The monitor runs each /check/ in a goroutine of its own: none may be left.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
