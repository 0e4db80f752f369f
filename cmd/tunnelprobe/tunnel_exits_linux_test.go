package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
)

// killOpenVPN kills this process's openvpn whose command line holds conf.
func killOpenVPN(t *testing.T, conf string) {
	t.Helper()
	for _, k := range netnstest.OpenVPNChildren() {
		if strings.Contains(k.Cmdline, conf) {
			if err := syscall.Kill(k.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no openvpn with %s to kill", conf)
}

// A load through an OpenVPN lab whose client's openvpn dies mid-run is a
// failed run, not a measurement: exit 1 naming the exit, and what was
// measured until then kept.
func TestLoadOpenVPNClientExitFailsTheRun(t *testing.T) {
	if err := harness.OpenVPNAvailable(""); err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	jsonFile := filepath.Join(t.TempDir(), "run.json")
	errb := newWatchBuffer()
	done := make(chan int, 1)
	var out bytes.Buffer
	go func() {
		done <- loadCommand(t.Context(), []string{"--lab", "--tunnel", "openvpn", "--conns", "4", "--duration", "40s",
			"--probe-every", "200ms", "--json", jsonFile}, noEnv, &out, errb)
	}()
	errb.waitFor(t, `open 4/4`)
	killOpenVPN(t, "client.ovpn")
	if code := <-done; code != 1 || !strings.Contains(errb.String(), "the lab's VPN client exited") {
		t.Errorf("exit %d, stderr:\n%s\nwant 1 naming the client's exit", code, errb.String())
	}
	if _, rep := readReport(t, jsonFile); rep.Result == nil || rep.Result.ConnsAchieved != 4 {
		t.Errorf("the report lost what was measured: %+v", rep.Result)
	}
}

// The lab whose server's openvpn dies exits 1 naming it; a client's exit
// is logged and the lab goes on (its control's restart brings it back).
func TestLabOpenVPNServerExitEndsTheLab(t *testing.T) {
	if err := harness.OpenVPNAvailable(""); err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	out := newLineWriter()
	errb := newWatchBuffer()
	done := make(chan int, 1)
	go func() {
		done <- labCommand(t.Context(), []string{"--tunnel", "openvpn", "--socks5", "", "--control", "127.0.0.1:0"},
			noEnv, out, errb)
	}()
	out.wait(t, `tunnel (openvpn/udp)`)
	killOpenVPN(t, "client.ovpn")
	errb.waitFor(t, `the VPN client exited`)
	killOpenVPN(t, "server.conf")
	if code := <-done; code != 1 || !strings.Contains(errb.String(), "the lab's VPN server exited") {
		t.Errorf("exit %d, stderr:\n%s\nwant 1 naming the server's exit", code, errb.String())
	}
}

// A lab interrupted while its openvpn starts exits 0 and says nothing, as
// after it has started: an interrupt is no failure.
func TestLabOpenVPNInterruptedWhileStartingIsQuiet(t *testing.T) {
	if err := harness.OpenVPNAvailable(""); err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errb bytes.Buffer
	if code := labCommand(ctx, []string{"--tunnel", "openvpn", "--socks5", "", "--control", "127.0.0.1:0"}, noEnv, &out, &errb); code != 0 || errb.Len() > 0 {
		t.Errorf("exit %d, stderr %q; want 0 and nothing", code, errb.String())
	}
}

// A load through an OpenVPN lab interrupted while the lab starts says
// only that, and exits 130 as any interrupted load does: no error of the
// lab's half-started openvpn.
func TestLoadOpenVPNInterruptedWhileStartingSaysOnlyThat(t *testing.T) {
	if err := harness.OpenVPNAvailable(""); err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	code, _, stderr := runLoadCommand(t, ctx, "--lab", "--tunnel", "openvpn", "--conns", "4", "--duration", "5s")
	if want := "tunnelprobe load: interrupted while the lab started, nothing measured\n"; code != cliflag.ExitInterrupted || stderr != want {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, cliflag.ExitInterrupted, want)
	}
}
