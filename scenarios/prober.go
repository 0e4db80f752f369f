package scenarios

import (
	"context"
	"math/rand/v2"

	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// newProber returns the Run of the prober p describes, probing the health
// server at hostPort and restarting c, its probes and decisions recorded
// in rec; rnd draws the kubelet's initial jitter.
func newProber(p ProberSpec, hostPort string, rnd *rand.Rand, rec *recorder, c prober.Container) (func(context.Context) error, error) {
	if p.Kind == "docker" {
		d, err := prober.NewDocker(prober.DockerConfig{
			URL: "http://" + hostPort + p.Endpoint, Interval: p.Period.Duration, Timeout: p.Timeout.Duration,
			StartPeriod: p.StartPeriod.Duration, Retries: p.FailureThreshold,
			RestartOnUnhealthy: p.Autoheal, OnProbe: rec.probe, OnDecision: rec.decision,
		}, c)
		if err != nil {
			return nil, err
		}
		return d.Run, nil
	}
	cfg := prober.KubeletConfig{
		Period: p.Period.Duration, Timeout: p.Timeout.Duration,
		InitialDelay: p.InitialDelay.Duration, FailureThreshold: p.FailureThreshold,
		SuccessThreshold: p.SuccessThreshold, Version: p.KubeletVersion, Rand: rnd,
		OnProbe: rec.probe, OnDecision: rec.decision,
	}
	p.kubeletHandler(&cfg, hostPort)
	k, err := prober.NewKubelet(cfg, c)
	if err != nil {
		return nil, err
	}
	return k.Run, nil
}
