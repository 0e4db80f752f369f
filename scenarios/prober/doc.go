// Package prober probes a container the way its orchestrator does: [Kubelet]
// reproduces the Kubernetes kubelet's probe worker and [Docker] the Docker
// daemon's HEALTHCHECK monitor, each with the probe kinds they use
// ([HTTPGet], [TCPSocket], [Exec], [GRPC]). It needs no lab, load or report: the
// probe command and the scenarios both use it.
//
// [Kubelet] probes a container exactly as the Kubernetes kubelet does
// (pkg/kubelet/prober/worker.go, prober.go, pkg/probe/http/http.go), rule by
// rule:
//
//   - One worker per container and probe type. Its probes run in its Run
//     goroutine, so they never overlap. Ticks come from a ticker with the
//     period; a tick that arrives during a probe is dropped, so a probe
//     longer than the period is followed at once by the next one.
//   - The first probe runs at once, or, when the kubelet started less than
//     a period ago, after a random sleep in [0, period).
//   - initialDelay is checked on ticks: a tick is skipped while the whole
//     seconds since the container started are below it.
//   - Liveness and readiness wait until the container counts as started
//     (KubeletConfig.Started); a startup probe stops once it has passed.
//   - One probe is one [KubeletVersion.HTTPGet]: a new connection, no
//     proxy, no compression, TLS not verified, HTTP/2 negotiated over TLS,
//     User-Agent kube-probe/1.37 (or the [KubeletVersion] configured), a
//     client timeout covering dial, TLS, headers and body, 200-399 passing
//     (3xx as a Warning), redirects followed to the same host only and at
//     most 10, at most 10 KiB of body read. A probe that errs after the
//     response began (Outcome Unknown) is run again at once, up to three
//     times, and then thrown away. The other handlers: [KubeletVersion.TCPSocket],
//     [Exec], and [KubeletVersion.GRPC] (from 1.23: grpc.health.v1 Check
//     without TLS, dial and call within the timeout, SERVING alone passes,
//     every error a failure).
//   - The worker keeps the last result and how many times in a row it
//     occurred; a different result resets the count to 1. The stored
//     state changes only when the count reaches failureThreshold or
//     successThreshold. A new container starts with readiness Failure,
//     liveness Success, startup Unknown.
//   - A liveness or startup failure calls [Container.Restart] ("failed
//     liveness probe, will be restarted"); the worker then holds, its count
//     reset, until it sees a new container ID.
//
// Every state change is reported as a [Decision]. [CrashBackoff] and
// [GracePeriod] give the timing of a restart for the Container
// implementation: an immediate first restart, then 10 s doubling to 300 s,
// reset after 10 minutes of running; a kill grace of the probe's or the pod's
// terminationGracePeriodSeconds, at least 2 s.
//
// [Docker] is the plain-Docker counterpart, the daemon's HEALTHCHECK monitor
// (moby daemon/health.go): interval, timeout, start period, start interval
// and retries, with the statuses starting, healthy and unhealthy. Docker
// only marks a container unhealthy; DockerConfig.RestartOnUnhealthy adds
// the restart an autoheal container would make.
//
// Concurrency: the constructors start nothing. Run blocks until its context
// ends; callbacks and Container methods are called from its goroutine only,
// and a prober is used by one Run at a time. Inject a clockwork.FakeClock to
// drive a prober in tests without sleeping. A probe closes everything it
// opened before it returns; nothing needs closing afterwards.
package prober
