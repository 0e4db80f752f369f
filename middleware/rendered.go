package middleware

import (
	"net/http"
	"sync/atomic"
)

// renderedStatus is the status answer to one state, rendered once in both
// formats: between two changes of the state every request is served these
// bytes, with no formatting or encoding of its own.
type renderedStatus struct {
	// snap is the state it answers; a request whose state differs in
	// any field renders it again.
	snap       Snapshot
	code       int
	text, json []byte
}

// statusCache holds the last rendered status answer.
type statusCache struct {
	last atomic.Pointer[renderedStatus]
}

// renderedFor returns the status answer to s, rendering it when the last
// one answered another state; nil when s's answer cannot be kept: it
// depends on more than s (the light probes' counts, the counters' error)
// or on the time (how late a stale loop is, how far a heal is past its
// timeout).
func (m *Monitor) renderedFor(s Snapshot) *renderedStatus {
	if c := m.rendered.last.Load(); c != nil && c.snap == s {
		return c
	}
	if m.evidence != nil || s.Stale || s.Healing != nil {
		return nil
	}
	rep := m.statusReply(s)
	c := &renderedStatus{snap: s, code: rep.code, text: rep.textBody(), json: rep.jsonBody(m.cfg.HideErrors)}
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
