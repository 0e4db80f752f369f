package prober

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// DryContainer is a Container for a prober that only says what it would
// do, as `tunnelprobe probe` does: a restart kills nothing and only gives
// it a new ID ("c2", "c3", ...) and start time, at once, so probing goes on
// as for a new container. Make one with NewDryContainer.
type DryContainer struct {
	clock   clockwork.Clock
	mu      sync.Mutex
	n       int
	started time.Time
}

// NewDryContainer returns a DryContainer "c1" started now on clock (nil:
// the real clock), the prober's.
func NewDryContainer(clock clockwork.Clock) *DryContainer {
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	return &DryContainer{clock: clock, n: 1, started: clock.Now()}
}

// ID returns "c" and the number of the container's incarnation.
func (c *DryContainer) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("c%d", c.n)
}

// StartedAt returns when the current incarnation started.
func (c *DryContainer) StartedAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// Restart starts the next incarnation at once.
func (c *DryContainer) Restart(context.Context, string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.started = c.clock.Now()
	return nil
}
