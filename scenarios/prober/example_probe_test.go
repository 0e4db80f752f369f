package prober_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// A liveness probe with failureThreshold 2 against an endpoint that answers
// 503: the second failure restarts the container, and the worker probes the
// new one on the next tick. A fake clock stands in for the 10 s period.
func ExampleKubelet() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "tunnel down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()

	clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC))
	probed := make(chan struct{})
	k, err := prober.NewKubelet(prober.KubeletConfig{
		URL:              srv.URL,
		Type:             prober.Liveness,
		FailureThreshold: 2,
		Clock:            clock,
		OnProbe: func(r prober.Result) {
			fmt.Println(r.Start.Format("15:04:05"), "probe", r.Outcome, r.Code)
			probed <- struct{}{}
		},
		OnDecision: func(d prober.Decision) {
			fmt.Println(d.Time.Format("15:04:05"), d.ContainerID, d.Kind+":", d.Reason)
		},
	}, prober.NewDryContainer(clock))
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- k.Run(ctx) }()
	for range 3 {
		<-probed
		clock.Advance(10 * time.Second)
	}
	<-probed
	cancel()
	<-done
	// Output:
	// 12:00:00 c1 live: new container
	// 12:00:00 probe failure 503
	// 12:00:10 probe failure 503
	// 12:00:10 c1 restart: failed liveness probe, will be restarted
	// 12:00:20 c2 live: new container
	// 12:00:20 probe failure 503
	// 12:00:30 probe failure 503
	// 12:00:30 c2 restart: failed liveness probe, will be restarted
}

// A DryContainer stands for a probed container that a restart only renames.
func ExampleDryContainer() {
	clock := clockwork.NewFakeClock()
	c := prober.NewDryContainer(clock)
	clock.Advance(time.Minute)
	_ = c.Restart(context.Background(), "liveness probe failed")
	fmt.Println(c.ID(), c.StartedAt().Sub(clock.Now()))
	// Output: c2 0s
}
