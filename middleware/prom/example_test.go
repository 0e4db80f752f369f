package prom_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/prom"
)

// Metrics next to the health endpoints: the Observer counts the checks, the
// Collector reads the state and mode at each scrape.
func ExampleNewObserver() {
	reg := prometheus.NewRegistry()
	obs, err := prom.NewObserver(reg, prom.Opts{})
	if err != nil {
		panic(err)
	}
	checker := check.Func(func(context.Context) error { return nil })
	mon, err := middleware.New(checker, middleware.Config{Mode: middleware.ModeProbe, Observer: obs})
	if err != nil {
		panic(err)
	}
	reg.MustRegister(prom.NewCollector(mon, prom.Opts{}))

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/", mon.Handler()) // the status and /check/
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/check/")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	resp, err = http.Get(srv.URL + "/metrics")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(line, " 1") && !strings.HasPrefix(line, "#") && !strings.Contains(line, "_bucket") {
			fmt.Println(line)
		}
	}
	// Output:
	// tunnelprobe_check_duration_seconds_count{result="pass",source="probe"} 1
	// tunnelprobe_checks_total{result="pass",source="probe"} 1
	// tunnelprobe_mode{mode="probe"} 1
	// tunnelprobe_state{state="healthy"} 1
	// tunnelprobe_state_changes_total{to="healthy"} 1
}
