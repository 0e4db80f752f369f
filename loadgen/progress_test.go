package loadgen_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// Off a terminal, Progress writes one line per second, counting the
// seconds from the first one reported.
func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	p := loadgen.NewProgress(&out, false, "level 1/2: ", 10, 5*time.Second)
	p.Second(loadgen.Second{T: 1000, Open: 5, BytesUp: 125_000, Connects: 5})
	p.Second(loadgen.Second{T: 1001, Open: 10, BytesDown: 250_000, Connects: 5, Probes: 1, ProbeMaxMS: 12.5})
	p.Done()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"level 1/2: 1s open 5/10 up 1.0 Mbit/s down 0.0 Mbit/s connects 5 errors 0 disruptions 0",
		"level 1/2: 2s open 10/10 up 0.0 Mbit/s down 2.0 Mbit/s connects 5 errors 0 disruptions 0 probe max 12.5 ms failed 0",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), &out)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, lines[i], want[i])
		}
	}
}
