package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Asking for OpenVPN where it cannot run (here: no openvpn program in
// PATH) is bad usage naming the flag, or the spec, and what is missing;
// so is --transport without it, or --tunnel without --lab.
func TestOpenVPNUnavailableIsBadUsage(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // an empty PATH: no openvpn
	spec := filepath.Join(t.TempDir(), "openvpn.yaml")
	if err := os.WriteFile(spec, []byte(`
name: ovpn
duration: 1m
tunnel: {kind: openvpn, transport: tcp}
link: {rate: 20mbit, queue: 256p, outages: [{start: 20s, duration: 10s}]}
configs:
  - {name: k8s, health: {mode: probe}, prober: {kind: kubelet, endpoint: /check/}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command  func(context.Context, []string, func(string) string, io.Writer, io.Writer) int
		args     []string
		mentions []string
	}{
		{labCommand, []string{"--tunnel", "openvpn"}, []string{"--tunnel", "openvpn program"}},
		{labCommand, []string{"--transport", "tcp"}, []string{"--transport is for --tunnel openvpn"}},
		{labCommand, []string{"--tunnel", "ipsec"}, []string{"--tunnel"}},
		{loadCommand, []string{"--lab", "--tunnel", "openvpn"}, []string{"--tunnel", "openvpn program"}},
		{loadCommand, []string{"--target", "127.0.0.1:9", "--tunnel", "openvpn"}, []string{"--tunnel and --transport need --lab"}},
		{scenarioCommand, []string{"--spec", spec}, []string{"--spec", "openvpn/tcp tunnel", "openvpn program"}},
		{scenarioCommand, []string{"--matrix", "--condition", "openvpn-udp"}, []string{"--condition", "openvpn program"}},
	} {
		var out, errb bytes.Buffer
		code := tc.command(t.Context(), tc.args, noEnv, &out, &errb)
		for _, m := range tc.mentions {
			if code != 2 || !strings.Contains(errb.String(), m) {
				t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", tc.args, code, errb.String(), m)
			}
		}
	}
}
