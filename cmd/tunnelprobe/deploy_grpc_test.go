package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/tunnelprobe/tunnelprobe/cmd/tunnelprobe/internal/serveflags"
	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// commentedYAML returns the YAML commented out in text from the comment
// line equal to first (indentation aside) to the last comment line after
// it at the same indentation, uncommented.
func commentedYAML(t *testing.T, text, first string) string {
	t.Helper()
	var out []string
	indent := -1
	for line := range strings.SplitSeq(text, "\n") {
		at := strings.Index(line, "# ")
		if at < 0 || strings.TrimSpace(line[:at]) != "" {
			at = -1 // not a comment line
		}
		if indent < 0 && at >= 0 && line[at+2:] == first {
			indent = at
		}
		if indent < 0 {
			continue
		}
		if at != indent {
			break
		}
		out = append(out, line[at+2:])
	}
	if len(out) == 0 {
		t.Fatalf("no commented %q", first)
	}
	return strings.Join(out, "\n")
}

// TestVPNDeploymentGRPCAlternative: the grpc probe the VPN Deployment offers
// in a comment is a valid probe of the sidecar's port, and the sidecar,
// with its flags, its environment and the variable the comment adds,
// answers the kubelet's grpc probe there: NOT_SERVING for a dead tunnel.
func TestVPNDeploymentGRPCAlternative(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(deployDir, "kubernetes", "vpn-deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var probes struct {
		LivenessProbe corev1.Probe `json:"livenessProbe"`
	}
	if err := yaml.UnmarshalStrict([]byte(commentedYAML(t, string(raw), "livenessProbe:")), &probes); err != nil {
		t.Fatal(err)
	}
	p := probes.LivenessProbe
	if p.GRPC == nil || p.GRPC.Port != 9999 || (p.GRPC.Service != nil && *p.GRPC.Service != "") || p.HTTPGet != nil {
		t.Fatalf("the commented probe %+v: want grpc on port 9999, the overall state", p.ProbeHandler)
	}
	grpcListen := regexp.MustCompile(`#\s+- name: TUNNELPROBE_GRPC_LISTEN\n\s+#\s+value: (.+)\n`).FindStringSubmatch(string(raw))
	listen := regexp.MustCompile(`- name: TUNNELPROBE_LISTEN\n\s+value: (.+)\n`).FindStringSubmatch(string(raw))
	if grpcListen == nil || listen == nil || grpcListen[1] != listen[1] {
		t.Fatalf("TUNNELPROBE_GRPC_LISTEN %v, TUNNELPROBE_LISTEN %v: want the same address, one port for both", grpcListen, listen)
	}

	m := loadManifests(t)
	var sidecar *corev1.Container
	for _, d := range m.deployments {
		for i, c := range d.Spec.Template.Spec.InitContainers {
			if d.Name == "vpn" && isTunnelprobe(c) {
				sidecar = &d.Spec.Template.Spec.InitContainers[i]
			}
		}
	}
	if sidecar == nil {
		t.Fatal("no sidecar in Deployment vpn")
	}
	env := containerEnv(t, *sidecar, testPodIP, false, 0)
	fs, parsed, err := commandFlags(sidecar.Args, env)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parsed.(*serveflags.Flags).ServerConfig(fs, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	if checkTimeout := cfg.Monitor.Timeouts[0]; checkTimeout > timeout {
		t.Errorf("--timeout %v over timeoutSeconds %v: a check cut off at the call's deadline would never be recorded", checkTimeout, timeout)
	}
	// The sidecar on one address for both, as the comment sets it; the
	// test's address, and a dead tunnel.
	addr := testnet.RefusedAddr(t)
	startServe(t, env, withFlags(sidecar.Args[1:], withoutTunnel(map[string]string{
		"check": "tcp", "target": testnet.RefusedAddr(t), "listen": addr, "grpc-listen": addr,
	}))...)
	r := prober.GRPC(t.Context(), addr, "", timeout, nil)
	if r.Outcome != prober.Failure || !strings.Contains(r.Err.Error(), "NOT_SERVING") {
		t.Errorf("the kubelet's grpc probe of the sidecar, tunnel dead: %v, %v; want NOT_SERVING", r.Outcome, r.Err)
	}
}
