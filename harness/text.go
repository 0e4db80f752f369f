package harness

import (
	"encoding"
	"encoding/json"
	"errors"
)

// Rate and QueueLimit are text, so that flags (flag.TextVar), JSON, YAML
// and the control API read them with one parser, ParseRate or ParseQueue,
// and fail with its error text. In JSON a plain number is taken too: bits
// per second for a rate, bytes for a queue.
var (
	_ encoding.TextUnmarshaler = (*Rate)(nil)
	_ encoding.TextUnmarshaler = (*QueueLimit)(nil)
	_ json.Unmarshaler         = (*Rate)(nil)
	_ json.Unmarshaler         = (*QueueLimit)(nil)
	_ encoding.TextMarshaler   = Rate(0)
	_ encoding.TextMarshaler   = QueueLimit{}
)

// MarshalText returns r.String().
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses text with ParseRate.
func (r *Rate) UnmarshalText(text []byte) error {
	v, err := ParseRate(string(text))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// UnmarshalJSON reads a string for ParseRate or a number of bits per
// second.
func (r *Rate) UnmarshalJSON(b []byte) error {
	s, err := jsonText(b)
	if err != nil {
		return err
	}
	return r.UnmarshalText([]byte(s))
}

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
	s, err := jsonText(b)
	if err != nil {
		return err
	}
	return q.UnmarshalText([]byte(s))
}

// jsonText returns a JSON string's contents or a number's text.
func jsonText(b []byte) (string, error) {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return "", errors.New("want a string or a number")
	}
	return n.String(), nil
}
