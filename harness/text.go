package harness

import (
	"encoding"
	"encoding/json"

	"github.com/tunnelprobe/tunnelprobe/internal/textnum"
)

// Rate (package rate) and QueueLimit are text, so that flags
// (flag.TextVar), JSON, YAML and the control API read them with one
// parser, rate.Parse or ParseQueue, and fail with its error text. In JSON a
// plain number is taken too: bits per second for a rate, bytes for a
// queue.
var (
	_ encoding.TextUnmarshaler = (*QueueLimit)(nil)
	_ json.Unmarshaler         = (*QueueLimit)(nil)
	_ encoding.TextMarshaler   = QueueLimit{}
)

// MarshalText returns q.String().
func (q QueueLimit) MarshalText() ([]byte, error) { return []byte(q.String()), nil }

// UnmarshalText parses text with ParseQueue.
func (q *QueueLimit) UnmarshalText(text []byte) error {
	v, err := ParseQueue(string(text))
	if err != nil {
		return err
	}
	*q = v
	return nil
}

// UnmarshalJSON reads a string for ParseQueue or a number of bytes.
func (q *QueueLimit) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // left as it was, as encoding/json does with null
	}
	s, err := textnum.JSONText(b)
	if err != nil {
		return err
	}
	return q.UnmarshalText([]byte(s))
}
