package loadgen

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen/internal/pace"
)

// Reconnect back-off: the first wait is about minBackoff, each next one
// doubles, up to maxBackoff.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// backoff is one connection's exponential back-off with jitter. The zero
// value is ready; it is not safe for concurrent use.
type backoff struct{ d time.Duration }

// next returns the next wait: half the current step plus a random part of
// the other half, so that thousands of connections broken at once by one
// outage do not redial in lockstep.
func (b *backoff) next() time.Duration {
	b.d = min(max(2*b.d, minBackoff), maxBackoff)
	return b.d/2 + rand.N(b.d/2+1)
}

// reset starts the back-off over.
func (b *backoff) reset() { b.d = 0 }

// wait sleeps for the next back-off; it reports false, early, when ctx
// ends.
func (b *backoff) wait(ctx context.Context) bool {
	return pace.Sleep(ctx, b.next())
}
