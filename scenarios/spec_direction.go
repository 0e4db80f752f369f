package scenarios

import "github.com/tunnelprobe/tunnelprobe/internal/enum"

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

var outageDirectionNames = []string{OutageBoth: "both", OutageUp: "up", OutageDown: "down"}

// String returns "both", "up" or "down".
func (d OutageDirection) String() string {
	return enum.Name("OutageDirection", outageDirectionNames, d)
}

// MarshalText returns d.String().
func (d OutageDirection) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads "both", "up" or "down", in any case; empty is both.
func (d *OutageDirection) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*d = OutageBoth
		return nil
	}
	v, err := enum.Parse[OutageDirection]("direction", outageDirectionNames, string(text))
	if err == nil {
		*d = v
	}
	return err
}
