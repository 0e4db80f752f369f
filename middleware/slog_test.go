package middleware_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// The log says when the light probe goes silent while the tunnel works,
// once, and when that ends, once.
func TestSlogSaysWhenTheLightProbeIsSilentWhileTheTunnelWorks(t *testing.T) {
	var buf bytes.Buffer
	obs := middleware.NewSlogObserver(slog.New(slog.NewTextHandler(&buf, nil)))
	silent := middleware.Result{Source: middleware.SourceProbe, Proof: middleware.ProofDelivery, SilentProbes: []string{"icmp 9.9.9.9"}}
	obs.CheckFinished(silent)
	obs.CheckFinished(silent)
	obs.CheckFinished(middleware.Result{Source: middleware.SourceProbe, Proof: middleware.ProofLightProbe})
	out := buf.String()
	if n := strings.Count(out, `msg="light probe silent while the tunnel works" targets="icmp 9.9.9.9" decided_by=delivery`); n != 1 {
		t.Errorf("%d warnings of the silence, want 1:\n%s", n, out)
	}
	if n := strings.Count(out, `msg="light probe silence while the tunnel works ended" decided_by=light-probe passed=true`); n != 1 {
		t.Errorf("%d lines saying the silence ended, want 1:\n%s", n, out)
	}
}
