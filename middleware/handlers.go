package middleware

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"
)

// StatusHandler returns the status endpoint: 200 when the state is healthy,
// 503 when it is unhealthy or unknown, with a short text naming the reason
// (JSON on request). ?wait=DURATION long-polls until the state is healthy or
// the wait (capped by MaxWait) is over, then answers with the state.
func (m *Monitor) StatusHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowRead(w, r) {
			return
		}
		q, err := parseQuery(r)
		var asJSON bool
		var wait time.Duration
		if err == nil {
			asJSON, err = wantsJSON(r, q)
		}
		if err == nil {
			wait, err = durationParam(q, "wait")
		}
		if err != nil {
			badRequest(w, err)
			return
		}
		if c := m.keptStatus(); c != nil && (wait == 0 || c.snap.Status == StatusHealthy) {
			c.write(w, asJSON)
			return
		}
		v := m.state.version.Load()
		s := m.Snapshot()
		if wait > 0 && s.Status != StatusHealthy {
			ctx, cancel := clockwork.WithTimeout(r.Context(), m.cfg.Clock, min(wait, m.cfg.MaxWait))
			s = m.WaitHealthy(ctx)
			cancel()
		}
		if c := m.renderedFor(v, s); c != nil {
			c.write(w, asJSON)
			return
		}
		m.statusReply(s).write(w, asJSON, m.cfg.HideErrors)
	})
}

func (m *Monitor) statusReply(s Snapshot) reply {
	rep := m.reply(http.StatusServiceUnavailable, "fail", s.Last, s)
	switch {
	case s.Stale:
		// Whatever the last result said, nothing has checked the tunnel
		// for longer than the loop promised.
		rep.text = fmt.Sprintf("stale: the health loop owed a result by %s and is %v late",
			s.DueBy.UTC().Format(time.RFC3339), m.cfg.Clock.Since(s.DueBy).Round(time.Second))
		if s.Last != nil {
			rep.text += fmt.Sprintf("; the last check, at %s, %s", s.Last.Start.UTC().Format(time.RFC3339), verdictText(s.Last))
		}
	case s.Status == StatusHealthy:
		rep.code, rep.verdict, rep.text = http.StatusOK, "pass", "healthy"+evidenceNote(s.Last, m.cfg.HideErrors)
		if s.ConsecutiveFailures > 0 {
			// Still healthy, but failing below the threshold.
			rep.verdict = "warn"
			rep.text = fmt.Sprintf("healthy, but the last %d check(s) failed: %s",
				s.ConsecutiveFailures, errorText(s.Last.Err, m.cfg.HideErrors))
		}
	case s.Status == StatusUnhealthy:
		rep.text = fmt.Sprintf("unhealthy after %d failed check(s): %s",
			s.ConsecutiveFailures, errorText(s.Last.Err, m.cfg.HideErrors))
	case s.Last != nil:
		rep.text = fmt.Sprintf("unknown: %d check(s) failed, %d needed to call it unhealthy: %s",
			s.ConsecutiveFailures, m.cfg.FailureThreshold, errorText(s.Last.Err, m.cfg.HideErrors))
	case m.cfg.Mode == ModeProbe:
		rep.text = "unknown: no check has run yet; in probe mode checks run only when /check/ is called"
	default:
		rep.text = "unknown: no check has run yet"
	}
	if h := s.Healing; h != nil {
		rep.text += fmt.Sprintf("; healing since %s (attempt %d", h.Time.UTC().Format(time.RFC3339), h.Attempt)
		if over := m.cfg.Clock.Since(h.Time) - h.Timeout; h.Timeout > 0 && over > 0 {
			// Its context ended at the timeout and it still runs: it
			// ignores cancellation, and no other heal can start.
			rep.text += fmt.Sprintf(", %v past its %v timeout", over.Round(time.Second), h.Timeout)
		}
		rep.text += ")"
	}
	return rep
}

// reply starts an answer on result r and state s, with the light probes'
// stats when there are any and the counters' error when they cannot be
// read.
func (m *Monitor) reply(code int, verdict string, r *Result, s Snapshot) reply {
	rep := reply{code: code, verdict: verdict, result: r, snap: s}
	rep.probes = m.LightProbeStats()
	if len(rep.probes) > 0 {
		rep.maxLoss = m.cfg.Evidence.MaxLoss
	}
	m.warnSilentProbes(&rep, s)
	for _, stats := range rep.probes {
		if stats.ProvesNothing != nil {
			rep.warn(lightProbeName, "evidence: "+errorText(stats.ProvesNothing, m.cfg.HideErrors)+"; the active check decides")
		}
		if err := stats.PathMTU.BlackHole; err != nil && !m.cfg.Evidence.FailOnMTU {
			// Reported, not failed: a restart rarely cures a path's MTU.
			rep.warn(pathMTUName, errorText(err, m.cfg.HideErrors)+": the users' full-size packets are lost")
		}
	}
	if _, ok, err := m.TrafficCounters(); ok && err != nil {
		// Evidence the deployment counts on is missing: say so in every
		// answer rather than let the active check decide unnoticed.
		text := "evidence: " + err.Error()
		if m.cfg.HideErrors {
			text = "evidence: the tunnel's traffic counters cannot be read"
		}
		rep.warn(countersName, text)
	}
	if s.ShortDeadlines > 0 {
		// The probe's ?timeout= is under the check timeout: its failures
		// are never recorded, and the state would never say unhealthy.
		rep.warn(unrecordedName, fmt.Sprintf("%d /check/ failure(s) since the last recorded result came at a deadline of %v, "+
			"under the %v check timeout, and were not recorded: give the monitor the probe's timeout (Config.Timeouts, serve --timeout %v)",
			s.ShortDeadlines, s.ShortDeadline, m.cfg.Timeouts[0], s.ShortDeadline))
	}
	return rep
}

// warnSilentProbes warns of the light probes' targets that are silent
// while the tunnel works: another target answers, or the last check
// passed on another proof (delivery, an active check). Their silence fails
// nothing, and a user should know the probe proves nothing now.
func (m *Monitor) warnSilentProbes(rep *reply, s Snapshot) {
	var answering, silent []string
	for _, p := range rep.probes {
		if p.Silent {
			silent = append(silent, p.Kind+" "+p.Target)
		} else {
			answering = append(answering, p.Kind+" "+p.Target)
		}
	}
	switch {
	case len(silent) == 0:
	case len(answering) > 0:
		rep.warn(silentProbeName, fmt.Sprintf("light probe %s silent while %s answers: its silence fails nothing",
			strings.Join(silent, ", "), strings.Join(answering, ", ")))
	case s.Last != nil && s.Last.Passed() && s.Last.Proof != ProofLightProbe:
		rep.warn(silentProbeName, fmt.Sprintf("light probe silent while the tunnel works (the last check passed on %s): %s proves nothing now",
			s.Last.DecidedBy(), strings.Join(silent, ", ")))
	case s.Last != nil && s.Last.Proof == "":
		// A quiet target decides nothing: the active check found this
		// failure, later than a probe that answers would have.
		rep.warn(silentProbeName, fmt.Sprintf("light probe %s silent, which decides nothing: the active check decided, "+
			"which takes up to its %v timeout where a target that answers fails a dead tunnel within the %v window",
			strings.Join(silent, ", "), m.cfg.Timeouts[0], m.evidence.cfg.Window))
	}
}

// evidenceNote returns " (what the evidence showed)" for a pass that
// evidence decided, "" for any other result.
func evidenceNote(r *Result, hide bool) string {
	if r == nil || !r.Passed() || r.Evidence == "" {
		return ""
	}
	if hide {
		return " (evidence)"
	}
	return " (" + r.Evidence + ")"
}

func verdictText(r *Result) string {
	if r.Passed() {
		return "passed"
	}
	return "failed"
}

// CheckHandler returns the on-demand check endpoint: it runs the check with
// the request's context (see [Monitor.Probe]) and answers 200 when it passes,
// 503 when it fails. The check has a server-side deadline: the check
// timeout (Timeouts[0]), or ?timeout=DURATION, capped by MaxCheckTimeout.
func (m *Monitor) CheckHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowRead(w, r) {
			return
		}
		q, err := parseQuery(r)
		var asJSON bool
		var timeout time.Duration
		if err == nil {
			asJSON, err = wantsJSON(r, q)
		}
		if err == nil {
			timeout, err = durationParam(q, "timeout")
		}
		if err != nil {
			badRequest(w, err)
			return
		}
		// A bare /check/ takes the check timeout, also where a router's
		// own timeout gave the request a later deadline.
		if timeout == 0 {
			timeout = m.cfg.Timeouts[0]
		}
		ctx, cancel := clockwork.WithTimeout(r.Context(), m.cfg.Clock, min(timeout, m.cfg.MaxCheckTimeout))
		defer cancel()
		// Answer even when the request's context ended: the client may be
		// gone, but when the server cancelled it (shutdown) the client is
		// still there and must not read an empty 200 as a pass.
		res := m.Probe(ctx)
		m.checkReply(res).write(w, asJSON, m.cfg.HideErrors)
	})
}

func (m *Monitor) checkReply(res Result) reply {
	rep := m.reply(http.StatusOK, "pass", &res, m.Snapshot())
	rep.text = "pass" + evidenceNote(&res, m.cfg.HideErrors)
	if res.Err != nil {
		rep.code, rep.verdict = http.StatusServiceUnavailable, "fail"
		rep.detail = errorText(res.Err, m.cfg.HideErrors)
		rep.text = "fail: " + rep.detail
	}
	return rep
}

// Handler returns both endpoints in one handler: the check on any path that
// ends in /check or /check/, the status on every other path, as the
// reference health server answered on every path (serve's root handler is
// this one). It needs no prefix stripping, so it mounts under any prefix of
// any router (chi's Mount); to answer the four health paths only and leave
// every other path to the router, use [Mount] on a ServeMux or
// [Monitor.Middleware].
func (m *Monitor) Handler() http.Handler {
	status, check := m.StatusHandler(), m.CheckHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isCheckPath(r.URL.Path) {
			check.ServeHTTP(w, r)
			return
		}
		status.ServeHTTP(w, r)
	})
}

func isCheckPath(p string) bool {
	return strings.HasSuffix(p, "/check") || strings.HasSuffix(p, "/check/")
}

// Middleware returns a middleware that serves the health endpoints under
// prefix (see [PathsUnder]) and passes every other request to the wrapped handler
// untouched.
func (m *Monitor) Middleware(prefix string) func(http.Handler) http.Handler {
	p := PathsUnder(prefix)
	status, check := m.StatusHandler(), m.CheckHandler()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case p.Status, p.StatusSlash:
				status.ServeHTTP(w, r)
			case p.Check, p.CheckSlash:
				check.ServeHTTP(w, r)
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

// Paths are the exact paths the health endpoints answer on under one
// prefix (see [PathsUnder]).
type Paths struct {
	// Status and StatusSlash are the status endpoint's: prefix and
	// prefix/, both "/" at the root.
	Status, StatusSlash string
	// Check and CheckSlash are the check endpoint's: prefix/check and
	// prefix/check/.
	Check, CheckSlash string
}

// PathsUnder returns the paths the health endpoints answer on under prefix.
// "health", "/health" and "/health/" are the same prefix; "" or "/" puts
// the status at the root.
func PathsUnder(prefix string) Paths {
	base := strings.TrimRight(prefix, "/")
	if base != "" && !strings.HasPrefix(base, "/") {
		base = "/" + base
	}
	status := base
	if status == "" {
		status = "/"
	}
	return Paths{Status: status, StatusSlash: base + "/", Check: base + "/check", CheckSlash: base + "/check/"}
}

// All returns the four paths, the status endpoint's first.
func (p Paths) All() []string { return []string{p.Status, p.StatusSlash, p.Check, p.CheckSlash} }

// Mount registers the health endpoints on mux under prefix, on their four
// paths exactly (see [PathsUnder]): the status at prefix and prefix/, the
// check at prefix/check and prefix/check/, with no redirects. Every other
// path, below prefix/ too, is the mux's to route as it would without them
// (404 when nothing else matches), as gorilla.Mount and Monitor.Middleware
// do.
func Mount(mux *http.ServeMux, prefix string, m *Monitor) {
	p := PathsUnder(prefix)
	status, check := m.StatusHandler(), m.CheckHandler()
	mux.Handle(exactly(p.StatusSlash), status)
	if p.Status != p.StatusSlash {
		mux.Handle(exactly(p.Status), status)
	}
	mux.Handle(exactly(p.Check), check)
	mux.Handle(exactly(p.CheckSlash), check)
}

// exactly returns the ServeMux pattern of path alone: a pattern that ends
// in a slash would match every path below it.
func exactly(path string) string {
	if strings.HasSuffix(path, "/") {
		return path + "{$}"
	}
	return path
}
