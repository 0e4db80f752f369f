package hostport_test

import (
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/hostport"
)

func TestWithDefault(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"example.com", "example.com:443"},
		{"example.com:8443", "example.com:8443"},
		{"127.0.0.1", "127.0.0.1:443"},
		{"127.0.0.1:80", "127.0.0.1:80"},
		{"::1", "[::1]:443"},
		{"[::1]", "[::1]:443"},
		{"[::1]:853", "[::1]:853"},
		{"2001:db8::1", "[2001:db8::1]:443"},
		{"[2001:db8::1]", "[2001:db8::1]:443"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			if got := hostport.WithDefault(tt.in, "443"); got != tt.want {
				t.Errorf("WithDefault(%q, \"443\") = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
