package preset_test

import (
	"context"
	"fmt"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
)

// The upstream VPN client's current check on the host network: the small
// check pings 1.1.1.1 and 8.8.8.8 in turn (asking 1.1.1.1 over DNS where
// ICMP is not permitted), the full one dials cloudflare.com and github.com
// in turn, and a failed tier restarts the VPN.
func ExampleUpstream() {
	var full []check.Checker
	for _, t := range preset.UpstreamTargets {
		full = append(full, check.TLS{Address: t})
	}
	small := preset.UpstreamSmall(nil, "1.1.1.1", preset.UpstreamEchoTargets...)
	cfg := preset.Upstream(small, full...)
	cfg.Heal = func(ctx context.Context) error { return nil } // restart the VPN here
	m, err := middleware.New(check.AnyOf(full...), cfg)       // AnyOf for /check/
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = m // go m.Run(ctx), and mount it as any other monitor
	for _, t := range cfg.Tiers {
		fmt.Printf("%-7s every %-4v tries %v\n", t.Name, t.Every, t.Tries)
	}
	// Output:
	// startup every 0s   tries 6s
	// small   every 1m0s tries 5s,5s,5s,10s,10s,10s,15s,15s,15s,30s
	// full    every 5m0s tries 10s,15s,30s
}
