package middleware

import (
	"net/http"
	"sync/atomic"
)

// renderedStatus is the status answer to one state, rendered once in both
// formats: between two changes of the state every request is served these
// bytes, with no formatting or encoding of its own.
type renderedStatus struct {
	// snap is the state it answers, at the state's version: a request
	// that finds another version compares its state with snap, and
	// renders the answer again when they differ in any field.
	snap       Snapshot
	version    uint64
	code       int
	text, json []byte
}

// statusCache holds the last rendered status answer.
type statusCache struct {
	last atomic.Pointer[renderedStatus]
}

// keptStatus returns the last rendered answer while the state is the one
// it answers, without a lock: no change since (the version), and no turn
// to stale (which only the clock makes); nil otherwise.
func (m *Monitor) keptStatus() *renderedStatus {
	c := m.rendered.last.Load()
	if c == nil || c.version != m.state.version.Load() {
		return nil
	}
	if !c.snap.DueBy.IsZero() && m.cfg.Clock.Since(c.snap.DueBy) > m.cfg.Period {
		return nil // stale now, as Snapshot would say
	}
	return c
}

// renderedFor returns the status answer to s, taken at version v (read
// before s, so that a change in between only renders it again), rendering
// it when the last one answered another state; nil when s's answer cannot
// be kept: it depends on more than s (the light probes' counts, the
// counters' error) or on the time (how late a stale loop is, how far a
// heal is past its timeout).
func (m *Monitor) renderedFor(v uint64, s Snapshot) *renderedStatus {
	last := m.rendered.last.Load()
	if last != nil && last.snap == s {
		if last.version != v {
			// Nothing the answer shows changed (a wake): the same bytes,
			// kept at the new version.
			c := *last
			c.version = v
			m.rendered.last.Store(&c)
		}
		return last
	}
	if m.evidence != nil || s.Stale || s.Healing != nil {
		return nil
	}
	rep := m.statusReply(s)
	c := &renderedStatus{snap: s, version: v, code: rep.code, text: rep.textBody(), json: rep.jsonBody(m.cfg.HideErrors)}
	m.rendered.last.Store(c)
	return c
}

// write sends c in the format the request asks for, as reply.write does.
func (c *renderedStatus) write(w http.ResponseWriter, asJSON bool) {
	if asJSON {
		writeAnswer(w, c.code, ctJSON, nil, c.json)
		return
	}
	writeAnswer(w, c.code, ctText, nosniff, c.text)
}
