package prom_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/loadgen/prom"
)

// The metrics follow a run second by second: give Observe as the run's
// OnSecond (loadgen.Config{OnSecond: m.Observe}) and serve reg.
func ExampleNewMetrics() {
	reg := prometheus.NewRegistry()
	m, err := prom.NewMetrics(reg)
	if err != nil {
		panic(err)
	}
	m.Observe(loadgen.Second{BytesUp: 1 << 20, Connects: 100, Open: 100})
	m.Observe(loadgen.Second{BytesUp: 1 << 20, Open: 100})
	n, _ := testutil.GatherAndCount(reg, "tunnelprobe_load_bytes_total")
	fmt.Println(n, "series of tunnelprobe_load_bytes_total")
	// Output: 2 series of tunnelprobe_load_bytes_total
}
