package harness

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseQueue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want QueueLimit
	}{
		{"300p", QueueLimit{Packets: 300}}, {"256KB", QueueLimit{Bytes: 256_000}}, {"256KiB", QueueLimit{Bytes: 262_144}},
		{"65536", QueueLimit{Bytes: 65536}}, {"1MB", QueueLimit{Bytes: 1_000_000}}, {"1500B", QueueLimit{Bytes: 1500}},
	} {
		got, err := ParseQueue(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseQueue(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "0p", "1.5p", "p", "-3p", "0", "10TB", "12 apples", "2GiB"} {
		if q, err := ParseQueue(in); err == nil {
			t.Errorf("ParseQueue(%q) = %v; want an error", in, q)
		}
	}
}

func TestParseDelayLoss(t *testing.T) {
	if d, err := ParseDelay("20ms"); err != nil || d != 20*time.Millisecond {
		t.Errorf("ParseDelay(20ms) = %v, %v", d, err)
	}
	for _, in := range []string{"-1ms", "20", "2h", "soon"} {
		if _, err := ParseDelay(in); err == nil {
			t.Errorf("ParseDelay(%q): no error", in)
		}
	}
	if p, err := ParseLoss("1%"); err != nil || p != 0.01 {
		t.Errorf("ParseLoss(1%%) = %v, %v", p, err)
	}
	for _, in := range []string{"1.5", "-0.1", "200%", "x"} {
		if _, err := ParseLoss(in); err == nil {
			t.Errorf("ParseLoss(%q): no error", in)
		}
	}
}

func TestParseMTU(t *testing.T) {
	for in, want := range map[string]int{"1400": 1400, " 576 ": 576, "65535": 65535, "0": 0, "unlimited": 0} {
		got, err := ParseMTU(in)
		if err != nil || got != want {
			t.Errorf("ParseMTU(%q) = %d, %v; want %d", in, got, err, want)
		}
		if back, err := ParseMTU(FormatMTU(got)); err != nil || back != got {
			t.Errorf("round trip of %q: %q -> %d, %v", in, FormatMTU(got), back, err)
		}
	}
	for _, in := range []string{"", "575", "65536", "-1", "1400B", "1.5k", "big"} {
		if got, err := ParseMTU(in); err == nil || !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseMTU(%q) = %d, %v; want a syntax error", in, got, err)
		}
	}
	for _, mtu := range []int{-1, 1, 575, 65536} {
		if err := (Settings{MTU: mtu}).Validate(); err == nil || !strings.HasPrefix(err.Error(), "mtu: ") {
			t.Errorf("Settings{MTU: %d}.Validate() = %v, want an error naming mtu", mtu, err)
		}
	}
}

// The parsers read outside input (flags, the control API): they must never
// panic, and what they accept must survive a round trip through String.
func FuzzParseQueue(f *testing.F) {
	for _, s := range []string{"256KB", "300p", "65536", "1MiB", "0p", "p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQueue(s)
		if err != nil {
			return
		}
		if err := q.validate(); err != nil || q.IsZero() {
			t.Fatalf("ParseQueue(%q) = %+v, invalid: %v", s, q, err)
		}
		back, err := ParseQueue(q.String())
		if err != nil || back != q {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, q, q.String(), back, err)
		}
	})
}

func FuzzParseLinkUpdate(f *testing.F) {
	for _, s := range []string{`{"rate":"20mbit","delay":"20ms","queue":"256KB","loss":0.01,"mtu":1400,"down":true}`, `{"mtu":"unlimited"}`, `{"mtu":"575"}`, `{"rate":5000000}`, `{}`, `[]`, `null`, `{"x":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		edit, err := ParseLinkUpdate([]byte(s))
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("error without a field: %v", err)
			}
			return
		}
		var st Settings
		edit(&st)
		if err := st.Validate(); err != nil {
			t.Fatalf("accepted %q into invalid settings %+v: %v", s, st, err)
		}
	})
}
