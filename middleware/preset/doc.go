// Package preset holds whole configurations of package middleware that
// reproduce the health checks this project compares against:
//
//   - [Reference], the health loop this project started from: a ladder of
//     timeouts, a fixed period and a heal with a growing backoff;
//   - [Upstream], the current check of the upstream VPN client (the
//     reference loop's successor): tiers of small and full checks, each
//     with its own period and tries, its small check built by
//     [UpstreamSmall].
//
// A preset is a [middleware.Config] like any other: set Heal, Observer and
// Clock on it, and pass it to [middleware.New]. Nothing here starts a
// goroutine.
package preset
