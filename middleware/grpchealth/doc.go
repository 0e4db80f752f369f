// Package grpchealth serves a [middleware.Monitor] as gRPC's health service,
// grpc.health.v1.Health, for the kubelet's grpc probe and any gRPC health
// client. Register it on a grpc.Server of your own:
//
//	healthpb.RegisterHealthServer(grpcServer, grpchealth.New(m, grpchealth.Config{MaxWatches: 32}))
//
// (healthpb is google.golang.org/grpc/health/grpc_health_v1). Package
// middleware/server serves it beside the HTTP endpoints, as `tunnelprobe
// serve --grpc-listen` does.
//
// # Methods
//
//   - Check runs the check on demand exactly as the /check/ endpoint does,
//     through [middleware.Monitor.Probe] with the call's context: the call's
//     deadline is the check's timeout (without one, the monitor's check
//     timeout, Timeouts[0], as a bare /check/ has), concurrent calls share
//     one execution with /check/ requests, a call whose caller leaves
//     cancels it (the last caller waits for it to return), and the same
//     rule decides what is recorded. A pass answers SERVING, a failure NOT_SERVING; why it failed
//     is in the monitor's observer (serve's log), not in the answer. A gRPC
//     client cancels the call at its deadline on a timer of its own, which
//     races the server's: a cancellation within 250 ms of the deadline
//     counts as the deadline, so that the recording rule sees one.
//   - Watch sends the state at once and then every change of it, without
//     running checks: SERVING while healthy, NOT_SERVING while unhealthy or
//     stale, UNKNOWN before a result decided (see [middleware.Snapshot]).
//     In probe mode only checks (Check calls, /check/ requests) change it.
//   - List answers the state as Watch first does, under the one name.
//
// # Bounds and shutdown
//
// A Watch holds its stream for as long as its client keeps it, so
// [Config].MaxWatches bounds how many are served at once: one past it is
// answered RESOURCE_EXHAUSTED at once. Check needs no bound of its own: it
// ends at its deadline, and concurrent calls share one check. Streams per
// connection and connections are the gRPC server's to bound
// (grpc.MaxConcurrentStreams, a limiting listener).
//
// [Server.Shutdown] ends every call in flight, and answers every later one,
// with [ErrShutdown] (UNAVAILABLE). Call it before grpc.Server's
// GracefulStop, which otherwise waits for every Watch's client to leave,
// or its Stop, which otherwise cuts the calls without a status.
//
// # Service names
//
// The empty name is the tunnel's overall state, the only name there is:
// Check answers NOT_FOUND for any other, and Watch sends SERVICE_UNKNOWN and
// keeps the call open, as grpc-go's own health server does. There are no
// names per target: the monitor keeps one state from one check (several
// targets are one check, passing when any passes), and a name per target
// would have to run that target's check beside the monitor, outside its
// coalescing and recording, giving a verdict that is not the state the
// probe restarts the tunnel on.
//
// # Concurrency
//
// A Server is safe for concurrent use and starts nothing of its own: each
// call runs in the goroutine gRPC gives it, and returns when its context
// ends or at Shutdown. The monitor's loop (Run) is the caller's to run.
package grpchealth
