package harness

import (
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
)

func TestRateAndQueueReadAsText(t *testing.T) {
	var v struct {
		Rate  Rate       `json:"rate"`
		Queue QueueLimit `json:"queue"`
	}
	for _, tc := range []struct {
		in    string
		rate  Rate
		queue QueueLimit
	}{
		{`{"rate":"20mbit","queue":"256p"}`, 20_000_000, QueueLimit{Packets: 256}},
		{`{"rate":5000000,"queue":262144}`, 5_000_000, QueueLimit{Bytes: 262144}},
		{`{"rate":"unlimited","queue":"1MiB"}`, 0, QueueLimit{Bytes: 1 << 20}},
	} {
		if err := json.Unmarshal([]byte(tc.in), &v); err != nil || v.Rate != tc.rate || v.Queue != tc.queue {
			t.Errorf("%s: %v %v, %v", tc.in, v.Rate, v.Queue, err)
		}
		out, err := json.Marshal(v)
		if err != nil || json.Unmarshal(out, &v) != nil || v.Rate != tc.rate || v.Queue != tc.queue {
			t.Errorf("%s: round trip through %s", tc.in, out)
		}
	}
	// The same parser and error text for JSON and flags.
	_, want := rate.Parse("20furlongs")
	jerr := json.Unmarshal([]byte(`{"rate":"20furlongs"}`), &v)
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var r Rate
	fs.TextVar(&r, "rate", Rate(1), "")
	ferr := fs.Parse([]string{"--rate", "20furlongs"})
	for _, err := range []error{jerr, ferr} {
		if err == nil || !strings.Contains(err.Error(), want.Error()) {
			t.Errorf("error %v, want one saying %q", err, want)
		}
	}
	if err := json.Unmarshal([]byte(`{"queue":true}`), &v); err == nil || !strings.Contains(err.Error(), "string or a number") {
		t.Errorf("a boolean queue: %v", err)
	}
}
