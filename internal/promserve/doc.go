// Package promserve is what every /metrics endpoint of the project shares:
// a registry that already holds the Go runtime's and the process's
// collectors ([NewRegistry]), and the handler that serves a gatherer with a
// bound on concurrent scrapes ([Handler]). The health middleware's metrics
// (package middleware/prom) and the load generator's (package loadgen/prom)
// both build on it, so that neither imports the other.
//
// Nothing here starts a goroutine or needs closing.
package promserve
