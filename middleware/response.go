package middleware

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// healthJSON is a response in the shape of the IETF draft "Health Check
// Response Format for HTTP APIs" (draft-inadarei-api-health-check), served
// as application/health+json.
type healthJSON struct {
	Status string                 `json:"status"` // pass, warn or fail
	Output string                 `json:"output,omitempty"`
	Checks map[string][]checkJSON `json:"checks,omitempty"`
	// Extensions the draft allows.
	State   string       `json:"state"`
	Mode    string       `json:"mode"`
	Stale   bool         `json:"stale,omitempty"`
	DueBy   string       `json:"dueBy,omitempty"`
	Healing *healingJSON `json:"healing,omitempty"`
	// LightProbes say which light probes prove the tunnel alive
	// (Config.Evidence), one per target, and what each showed over the
	// loss window.
	LightProbes []lightProbeJSON `json:"lightProbes,omitempty"`
}

// lightProbeJSON describes a light probe in use.
type lightProbeJSON struct {
	Kind       string `json:"kind"`
	Target     string `json:"target"`
	Sent       int    `json:"sent"`
	Answered   int    `json:"answered"`
	LastAnswer string `json:"lastAnswer,omitempty"`
	// PathMTU is the largest IP packet a probe of the path MTU got an
	// answer for over the loss window, MTU the interface's; both absent
	// without such probes.
	PathMTU *int `json:"pathMTU,omitempty"`
	MTU     int  `json:"mtu,omitempty"`
}

// healingJSON describes the heal that runs now.
type healingJSON struct {
	Since   string `json:"since"`
	Attempt int    `json:"attempt"`
}

type checkJSON struct {
	ComponentType       string   `json:"componentType"`
	Status              string   `json:"status"`
	Time                string   `json:"time,omitempty"`
	ObservedValue       *float64 `json:"observedValue,omitempty"`
	ObservedUnit        string   `json:"observedUnit,omitempty"`
	Output              string   `json:"output,omitempty"`
	Source              string   `json:"source,omitempty"`
	ConsecutiveFailures int      `json:"consecutiveFailures"`
	// DecidedBy is the proof that decided the check without an active one
	// (Result.Proof: light-probe, delivery, counters, full-check), or
	// "active" when a check ran.
	DecidedBy string `json:"decidedBy,omitempty"`
	// ComponentID is the draft's name of the component checked: the
	// interface the check went through (Config.Via).
	ComponentID string `json:"componentId,omitempty"`
}

// The keys of the checks in the JSON response: the check, and the light
// probes' round trip and loss; and as warnings the traffic counters when
// they cannot be read, a light probe that proves nothing, and failures not
// recorded for a short deadline.
const (
	checkName       = "tunnel:connectivity"
	probeRTTName    = "tunnel:probe-rtt"
	probeLossName   = "tunnel:probe-loss"
	countersName    = "tunnel:counters"
	lightProbeName  = "tunnel:light-probe"
	pathMTUName     = "tunnel:path-mtu"
	silentProbeName = "tunnel:light-probe-silent"
	unrecordedName  = "tunnel:unrecorded"
)

const hiddenError = "check failed (details hidden)"

// reply is what a handler answers: an HTTP status, the overall verdict and
// the result it rests on.
type reply struct {
	code    int
	verdict string // pass, warn or fail
	text    string // the short plain-text line
	detail  string // the JSON output when it differs from text
	result  *Result
	snap    Snapshot
	// probes are what the light probes showed, one per target.
	probes []LightProbeStats
	// maxLoss is Evidence.MaxLoss, to rate the loss.
	maxLoss float64
	// warnings are what makes the answer less than it seems, by their
	// key in the JSON checks: the evidence's counters that cannot be read,
	// failures that went unrecorded.
	warnings map[string]string
}

// warn adds a warning under key, after any it has.
func (rep *reply) warn(key, text string) {
	if rep.warnings == nil {
		rep.warnings = map[string]string{}
	}
	if prev := rep.warnings[key]; prev != "" {
		text = prev + "; " + text
	}
	rep.warnings[key] = text
}

// write sends rep in the format the request asks for.
func (rep reply) write(w http.ResponseWriter, asJSON, hideErrors bool) {
	if asJSON {
		writeAnswer(w, rep.code, ctJSON, nil, rep.jsonBody(hideErrors))
		return
	}
	writeAnswer(w, rep.code, ctText, nosniff, rep.textBody())
}

// The answers' header values, built once: a handler assigns them to the
// header map as they are, with no slice to allocate per request. Their
// capacity is their length, so a later Add copies rather than writes into
// them, and Set and Del replace them; only code that writes into a
// header's values in place (h[k][0] = v), which neither net/http nor a
// wrapper using Header's methods does, would change them for every
// answer.
var (
	noStore = []string{"no-store"}
	ctText  = []string{"text/plain; charset=utf-8"}
	ctJSON  = []string{"application/health+json"}
	nosniff = []string{"nosniff"}
)

// writeAnswer sends code and body with the headers every answer has:
// Cache-Control no-store, contentType, and X-Content-Type-Options when
// sniff is set.
func writeAnswer(w http.ResponseWriter, code int, contentType, sniff []string, body []byte) {
	h := w.Header()
	h["Cache-Control"] = noStore
	h["Content-Type"] = contentType
	if sniff != nil {
		h["X-Content-Type-Options"] = sniff
	}
	w.WriteHeader(code)
	_, _ = w.Write(body) // the client may have gone; nothing to do then
}

// textBody returns rep as its plain-text line.
func (rep reply) textBody() []byte {
	text := rep.text
	if r := rep.result; r != nil && r.Via != "" {
		text += " [via " + r.Via + "]"
	}
	for _, key := range slices.Sorted(maps.Keys(rep.warnings)) {
		text += "; warning: " + rep.warnings[key]
	}
	return []byte(text + "\n")
}

// jsonBody returns rep in the IETF draft's JSON, indented.
func (rep reply) jsonBody(hideErrors bool) []byte {
	body := healthJSON{
		Status: rep.verdict,
		State:  rep.snap.Status.String(),
		Mode:   rep.snap.Mode.String(),
		Stale:  rep.snap.Stale,
	}
	if !rep.snap.DueBy.IsZero() {
		body.DueBy = rep.snap.DueBy.UTC().Format(time.RFC3339Nano)
	}
	if h := rep.snap.Healing; h != nil {
		body.Healing = &healingJSON{Since: h.Time.UTC().Format(time.RFC3339Nano), Attempt: h.Attempt}
	}
	if rep.verdict != "pass" {
		body.Output = rep.text
		if rep.detail != "" {
			body.Output = rep.detail
		}
	}
	if r := rep.result; r != nil {
		body.Checks = map[string][]checkJSON{checkName: {resultJSON(r, rep.snap.ConsecutiveFailures, hideErrors)}}
	}
	for _, p := range rep.probes {
		rep.writeProbe(&body, p)
	}
	for key, text := range rep.warnings {
		if body.Checks == nil {
			body.Checks = map[string][]checkJSON{}
		}
		body.Checks[key] = []checkJSON{{ComponentType: "system", Status: "warn", Output: text}}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	_ = enc.Encode(body) // nothing in it can fail to encode
	return buf.Bytes()
}

// resultJSON returns the check's entry for result r.
func resultJSON(r *Result, failures int, hideErrors bool) checkJSON {
	c := checkJSON{
		ComponentType:       "system",
		Status:              "pass",
		Time:                r.Start.UTC().Format(time.RFC3339Nano),
		ObservedUnit:        "ms",
		Source:              r.Source.String(),
		ConsecutiveFailures: failures,
		ComponentID:         r.Via,
	}
	ms := float64(r.Duration) / float64(time.Millisecond)
	c.ObservedValue = &ms
	c.DecidedBy = r.DecidedBy()
	if r.Err != nil {
		c.Status = "fail"
		c.Output = errorText(r.Err, hideErrors)
	} else if note := evidenceNote(r, hideErrors); note != "" {
		c.Output = note[2 : len(note)-1]
	}
	return c
}

// writeProbe adds a light probe to body: which one, and its round trip
// and loss as observed values, each named by its target.
func (rep reply) writeProbe(body *healthJSON, p LightProbeStats) {
	lp := lightProbeJSON{Kind: p.Kind, Target: p.Target, Sent: p.Sent, Answered: p.Answered}
	if !p.LastAnswer.IsZero() {
		lp.LastAnswer = p.LastAnswer.UTC().Format(time.RFC3339Nano)
	}
	if m := p.PathMTU; m.MTU > 0 {
		lp.PathMTU, lp.MTU = &m.Largest, m.MTU
	}
	body.LightProbes = append(body.LightProbes, lp)
	if body.Checks == nil {
		body.Checks = map[string][]checkJSON{}
	}
	what := p.Kind + " " + p.Target
	if p.Answered > 0 {
		ms := float64(p.RTT) / float64(time.Millisecond)
		body.Checks[probeRTTName] = append(body.Checks[probeRTTName], checkJSON{ComponentType: "system", ComponentID: p.Target, Status: "pass",
			ObservedValue: &ms, ObservedUnit: "ms", Output: "median round trip of " + what, DecidedBy: ProofLightProbe})
	}
	if p.Sent > 0 {
		pct := 100 * p.Loss
		status := "pass"
		switch {
		case p.lossTooHigh(rep.maxLoss):
			status = "fail"
		case p.Loss > 0:
			status = "warn"
		}
		body.Checks[probeLossName] = append(body.Checks[probeLossName], checkJSON{ComponentType: "system", ComponentID: p.Target, Status: status,
			ObservedValue: &pct, ObservedUnit: "%", Output: fmt.Sprintf("%d of %d probes (%s) unanswered", p.Sent-p.Answered, p.Sent, what),
			DecidedBy: ProofLightProbe})
	}
}

func errorText(err error, hide bool) string {
	if hide {
		return hiddenError
	}
	return err.Error()
}

// wantsJSON reads ?format= (text or json), falling back to the Accept header.
func wantsJSON(r *http.Request, q query) (bool, error) {
	switch f := q.Get("format"); f {
	case "json":
		return true, nil
	case "text":
		return false, nil
	case "":
	default:
		return false, fmt.Errorf("format: %q is neither text nor json", f)
	}
	return prefersJSON(r.Header.Values("Accept")), nil
}

// prefersJSON reads Accept headers (RFC 9110, section 12.5.1) and reports
// whether they rank JSON (application/health+json, application/json or
// application/*) above plain text (text/plain, text/* or */*). A type with
// q=0 is not acceptable; on a tie, a type named outright beats a wildcard;
// no header at all means text.
func prefersJSON(headers []string) bool {
	var qJSON, qText float64
	textNamed := false
	for _, h := range headers {
		for mediaRange := range strings.SplitSeq(h, ",") {
			typ, q := parseMediaRange(mediaRange)
			switch typ {
			case "application/health+json", "application/json", "application/*":
				qJSON = max(qJSON, q)
			case "text/plain":
				if q >= qText {
					textNamed = true
				}
				qText = max(qText, q)
			case "text/*", "*/*":
				if q > qText {
					textNamed = false
				}
				qText = max(qText, q)
			}
		}
	}
	return qJSON > 0 && (qJSON > qText || qJSON == qText && !textNamed)
}

// parseMediaRange returns a media range's type, lower-cased, and its
// weight: 1 unless a valid q parameter says otherwise, 0 for an invalid one.
func parseMediaRange(s string) (typ string, q float64) {
	typ, params, _ := strings.Cut(s, ";")
	typ = strings.ToLower(strings.TrimSpace(typ))
	q = 1
	for p := range strings.SplitSeq(params, ";") {
		name, value, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
			return typ, 0
		}
		q = v
	}
	return typ, q
}

// durationParam parses a non-negative duration query parameter given as a
// Go duration ("2.5s", "1m") or as plain seconds ("10"). Missing is 0.
func durationParam(q query, name string) (time.Duration, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || secs > float64(1<<62)/float64(time.Second) {
			return 0, fmt.Errorf("%s: %q is not a duration such as 10s or 1m", name, s)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 {
		return 0, fmt.Errorf("%s: %q is negative", name, s)
	}
	return d, nil
}

// query is a request's query string, parsed.
type query struct {
	// raw is the query string when it is one parameter at most and needs
	// no unescaping, and so is read as it is, without allocating (what a
	// prober or a load balancer sends every time); parsed is nil then.
	raw    string
	parsed url.Values
}

// parseQuery parses the query string, rejecting malformed ones.
func parseQuery(r *http.Request) (query, error) {
	raw := r.URL.RawQuery
	if !strings.ContainsAny(raw, "%+;&") {
		// Nothing url.ParseQuery would unescape or reject (a bad
		// escape, a semicolon, more parameters than its limit).
		return query{raw: raw}, nil
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return query{}, fmt.Errorf("malformed query string: %w", err)
	}
	return query{parsed: q}, nil
}

// Get returns the first value of name, as url.Values.Get does.
func (q query) Get(name string) string {
	if q.parsed != nil {
		return q.parsed.Get(name)
	}
	if key, value, _ := strings.Cut(q.raw, "="); key == name {
		return value
	}
	return ""
}

// allowRead answers 405 to anything but GET and HEAD and reports whether the
// request may go on.
func allowRead(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, fmt.Sprintf("method %s not allowed: use GET or HEAD", r.Method), http.StatusMethodNotAllowed)
	return false
}

func badRequest(w http.ResponseWriter, err error) {
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, "bad query parameter "+err.Error(), http.StatusBadRequest)
}
