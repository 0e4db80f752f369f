package server

import (
	"fmt"
	"sync"
)

// headTail is an io.Writer that keeps the first and the last limit bytes of
// what is written to it and counts the rest, so that a heal command that
// prints without end costs 2*limit bytes of memory, not its whole output.
// It is safe for concurrent use (exec writes stdout and stderr from two
// goroutines when they differ).
type headTail struct {
	limit int

	mu      sync.Mutex
	head    []byte
	tail    []byte // a ring of limit bytes once full; next is where it goes on
	next    int
	written int64
}

func newHeadTail(limit int) *headTail { return &headTail{limit: limit} }

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	h.written += int64(n)
	if room := h.limit - len(h.head); room > 0 {
		take := min(room, len(p))
		h.head = append(h.head, p[:take]...)
		p = p[take:]
	}
	if len(p) >= h.limit {
		// Only the last limit bytes of p can end up in the tail.
		p = p[len(p)-h.limit:]
	}
	for len(p) > 0 {
		if len(h.tail) < h.limit {
			take := min(h.limit-len(h.tail), len(p))
			h.tail = append(h.tail, p[:take]...)
			p = p[take:]
			continue
		}
		c := copy(h.tail[h.next:], p)
		h.next = (h.next + c) % h.limit
		p = p[c:]
	}
	return n, nil
}

// String returns the head, then the tail, with how many bytes between them
// were dropped.
func (h *headTail) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail := append(append([]byte(nil), h.tail[h.next:]...), h.tail[:h.next]...)
	dropped := h.written - int64(len(h.head)) - int64(len(tail))
	if dropped == 0 {
		return string(h.head) + string(tail)
	}
	return fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", h.head, dropped, tail)
}
