package cliflag

import (
	"strings"
	"testing"
	"time"
)

// The bounded values refuse what is out of range, saying why.
func TestBoundedValues(t *testing.T) {
	var d time.Duration
	var x float64
	for _, tc := range []struct {
		set  func(string) error
		in   string
		want string // "" accepts
	}{
		{MinDuration(&d, time.Second, 10*time.Millisecond).Set, "10ms", ""},
		{MinDuration(&d, time.Second, 10*time.Millisecond).Set, "1ns", "shorter than 10ms"},
		{MinDuration(&d, time.Second, 10*time.Millisecond).Set, "0s", "must be positive"},
		{Share(&x).Set, "0.2", ""},
		{Share(&x).Set, "0", ""},
		{Share(&x).Set, "1", "want a share below 1"},
		{Share(&x).Set, "NaN", "not a number"},
		{func(s string) error { _, err := InterfaceName(s); return err }, "wg0", ""},
		{func(s string) error { _, err := InterfaceName(s); return err }, "a/b", "no slash"},
		{func(s string) error { _, err := InterfaceName(s); return err }, strings.Repeat("w", 16), "at most 15"},
		{func(s string) error { _, err := InterfaceName(s); return err }, "..", "not an interface name"},
		{Addr(new(string), "", false).Set, "[10.0.0.5]:9999", ""},
		{Addr(new(string), "", false).Set, "[fd00::5]:9999", ""},
		{Addr(new(string), "", false).Set, "fd00::5:9999", "brackets before its port: [fd00::5]:9999"},
		{Addr(new(string), "", false).Set, "::1", "without a port: want [::1]:9999"},
		{Addr(new(string), "", false).Set, "nonsense", "not a host:port address"},
	} {
		err := tc.set(tc.in)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}
