package scenarios

import "fmt"

// OutageDirection is what an outage drops: both directions of the link, or
// one. It is text in a spec: "both", "up" or "down".
type OutageDirection int

const (
	// OutageBoth drops everything: the zero value.
	OutageBoth OutageDirection = iota
	// OutageUp drops what the client sends to the server only.
	OutageUp
	// OutageDown drops what the server sends to the client only.
	OutageDown
)

var outageDirectionNames = [...]string{OutageBoth: "both", OutageUp: "up", OutageDown: "down"}

// String returns "both", "up" or "down".
func (d OutageDirection) String() string {
	if d >= 0 && int(d) < len(outageDirectionNames) {
		return outageDirectionNames[d]
	}
	return fmt.Sprintf("OutageDirection(%d)", int(d))
}

// MarshalText returns d.String().
func (d OutageDirection) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads "both", "up" or "down".
func (d *OutageDirection) UnmarshalText(text []byte) error {
	for v, name := range outageDirectionNames {
		if string(text) == name {
			*d = OutageDirection(v)
			return nil
		}
	}
	return fmt.Errorf("%q is not both, up or down", text)
}
