package server

import (
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of the bounds in [Config], sized for what calls a health
// endpoint: a kubelet's probes (a connection or two each period, one call
// each), a few scrapers and docker healthchecks, perhaps a gRPC client
// that watches. A stream (a Watch, a Check in flight) costs a few
// goroutines and about 33 KiB, so the defaults hold the server under
// 20 MiB of streams (64 × 8) at the very worst, whatever its clients do.
const (
	// DefaultMaxConnections is ten times what the probes and scrapers of
	// one pod open at once: a burst of them never waits.
	DefaultMaxConnections = 64
	// DefaultMaxStreams leaves a gRPC client room for a Watch and its
	// Check calls on one connection; the kubelet makes one call per
	// connection.
	DefaultMaxStreams = 8
	// DefaultMaxWatches is more Watch calls than a sidecar has watchers.
	DefaultMaxWatches = 32
)

// limits are a Config's bounds as httpserve and grpchealth take them:
// zero for none.
type limits struct {
	connections, streams, watches int
}

func limitsOf(cfg Config) limits {
	return limits{
		connections: bound(cfg.MaxConnections, DefaultMaxConnections),
		streams:     bound(cfg.MaxStreams, DefaultMaxStreams),
		watches:     bound(cfg.MaxWatches, DefaultMaxWatches),
	}
}

// bound returns n, def for zero, and zero (none) for a negative n.
func bound(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// refusalLogInterval is how often, at most, refusals are logged after the
// first.
const refusalLogInterval = time.Minute

// refusals counts the connections refused past MaxConnections, over every
// listener, and logs them: the first at once, then at most once every
// refusalLogInterval, with the count since the last line. Its refused is
// httpserve.Options.Refused, called from the accept loops.
type refusals struct {
	logger  *slog.Logger
	clock   clockwork.Clock
	max     int
	counter prometheus.Counter // nil without Config.Metrics

	mu       sync.Mutex
	total    int
	logged   int // total at the last line
	loggedAt time.Time
}

func (r *refusals) refused() {
	if r.counter != nil {
		r.counter.Inc()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total++
	if now := r.clock.Now(); r.logged == 0 || now.Sub(r.loggedAt) >= refusalLogInterval {
		r.log(now)
	}
}

// flush logs the refusals since the last line, if any: at shutdown.
func (r *refusals) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.total > r.logged {
		r.log(r.clock.Now())
	}
}

func (r *refusals) log(now time.Time) {
	r.logger.Warn("refused connections past the bound: too many at once",
		"max_connections", r.max, "refused", r.total-r.logged, "refused_total", r.total)
	r.logged, r.loggedAt = r.total, now
}
