// Package server is the health server that `tunnelprobe serve` deploys as a
// sidecar: a [middleware.Monitor]'s loop and HTTP endpoints on one listener,
// with the project's one server lifecycle, and two heals: [HealCommand] runs
// a shell command, [HealHTTP] sends requests to the VPN client's own control
// API (gluetun's PUT /v1/vpn/status), for images without a shell. Its gRPC
// health service (package grpchealth) is served on the same listener with
// [Config].GRPC, on one of its own with [Server.ServeWithGRPC], or both,
// through the same lifecycle. The tunnel lab's roles and the scenarios run
// this same package, so that the comparison measures what users deploy.
//
// # Bounds
//
// Each listener serves at most [Config].MaxConnections connections at once,
// each HTTP/2 connection at most MaxStreams streams, and all of them
// together at most MaxWatches gRPC Watch calls (one past them is answered
// RESOURCE_EXHAUSTED); an HTTP/2 client that stops answering pings is
// dropped. The defaults ([DefaultMaxConnections], [DefaultMaxStreams],
// [DefaultMaxWatches]) are sized for a health endpoint that a kubelet and a
// few scrapers call.
//
// A connection past MaxConnections is refused at once and closed, rather
// than left waiting to be accepted: an HTTP/1.1 client (or one that sends
// nothing) gets a 503 with Retry-After: 1 and a message, "too many
// connections: this server serves at most N at once", a gRPC call (HTTP/2
// without TLS) UNAVAILABLE with that message, then a GOAWAY. A client that
// sends nothing or never reads holds up no other: its refusal lasts a
// second at most, and a few run at once. The refusals are logged at warn
// level, the first at once and then at most once a minute with their
// count, and with [Config].Metrics counted in
// tunnelprobe_connections_refused_total.
//
// # Concurrency
//
// [Serve] blocks: it runs the monitor's loop and serves until its context
// ends. Then it ends the gRPC calls in flight with UNAVAILABLE and waits for
// them to answer, cancels the HTTP requests in flight (a long poll answers
// at once, a /check/ answers as failed), shuts down gracefully (5 s at
// most for each step) and returns once the loop and every connection are
// done. It owns the listeners and closes them. The caller owns the
// monitor; Run must not be running already.
//
// A [HealCommand] heal runs its command in a process group of its own,
// killed with every process it started when the heal's context ends (the
// monitor's HealTimeout, or shutdown). Its exit status decides; what it
// leaves running in its group when it exits is killed. With [Config].Reap,
// for a process that is PID 1, Serve also waits for the orphans the
// process inherits (a daemon the heal started, once it exits; a job left
// in the group, once killed), which would otherwise stay zombies, without
// taking the heal command's own exit status.
package server
