package middleware

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Ladder is a list of check timeouts, the type of Config.Timeouts, as text:
// comma-separated positive Go durations ("2s,4s,6s,8s,10s"), or
// "reference" for the reference health loop's ladder (those five). Its
// UnmarshalText is the one parser, for serve --timeouts, specs and anything
// else that reads one; in JSON it is a list of duration strings, or that
// text.
type Ladder []time.Duration

// parseLadder parses comma-separated positive Go durations, or "reference".
func parseLadder(s string) (Ladder, error) {
	if strings.TrimSpace(s) == "reference" {
		return append(Ladder(nil), referenceTimeouts...), nil
	}
	var l Ladder
	for v := range strings.SplitSeq(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		switch {
		case err != nil:
			return nil, fmt.Errorf("%q is not a duration such as 2s: want a ladder such as 2s,4s,6s or reference", v)
		case d <= 0:
			return nil, fmt.Errorf("%q is not positive", v)
		}
		l = append(l, d)
	}
	return l, nil
}

// Total is the sum of l's timeouts: the longest its tries take in all.
func (l Ladder) Total() time.Duration {
	var d time.Duration
	for _, x := range l {
		d += x
	}
	return d
}

// String returns l as UnmarshalText reads it.
func (l Ladder) String() string { return strings.Join(l.durations(), ",") }

func (l Ladder) durations() []string {
	s := make([]string, len(l))
	for i, d := range l {
		s[i] = d.String()
	}
	return s
}

// MarshalText returns l.String().
func (l Ladder) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText parses text: comma-separated positive Go durations, or
// "reference".
func (l *Ladder) UnmarshalText(text []byte) error {
	v, err := parseLadder(string(text))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// MarshalJSON writes l as a list of duration strings.
func (l Ladder) MarshalJSON() ([]byte, error) { return json.Marshal(l.durations()) }

// UnmarshalJSON reads a list of duration strings, or a string for
// UnmarshalText.
func (l *Ladder) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		return l.UnmarshalText([]byte(strings.Join(list, ",")))
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("want a list of durations such as [2s, 4s] or \"reference\"")
	}
	return l.UnmarshalText([]byte(s))
}
