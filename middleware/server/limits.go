package server

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
