package scenarios

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// A spec's kubelet_version reaches the kubelet prober: its probes carry
// that version's User-Agent. A version not modelled is refused by
// Validate, naming the field, in a spec built in Go too.
func TestProberKubeletVersion(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.UserAgent():
		default: // a later probe: the first one is the answer
		}
	}))
	defer srv.Close()
	p := ProberSpec{Kind: "kubelet", Endpoint: "/", KubeletVersion: 28}
	run, err := newProber(p, strings.TrimPrefix(srv.URL, "http://"), rand.New(rand.NewPCG(1, 1)), newRecorder(time.Now()), prober.NewDryContainer(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	ua := <-got // the first probe runs at once
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ua != "kube-probe/1.28" {
		t.Errorf("User-Agent %q with kubelet_version 1.28", ua)
	}

	p.KubeletVersion = 12
	if err := p.validate(); err == nil || !strings.Contains(err.Error(), "kubelet_version: kubelet version 1.12 is not modelled") {
		t.Errorf("kubelet_version 1.12: %v, want it refused", err)
	}
}
