package main

import (
	"errors"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
	"github.com/tunnelprobe/tunnelprobe/middleware/target"
)

// parseLoadRate reads --rate: "greedy" (0) or a rate as the lab's link
// takes it, in bits/s.
func parseLoadRate(s string) (rate.Rate, error) {
	if strings.EqualFold(strings.TrimSpace(s), "greedy") {
		return 0, nil
	}
	r, err := rate.Parse(s)
	if err != nil {
		return 0, errors.New(`want "greedy" or a rate such as 100mbit, 5MB/s or a number of bits/s`)
	}
	return r, nil
}

func formatLoadRate(r rate.Rate) string {
	if r == 0 {
		return "greedy"
	}
	return r.String()
}

// parseLoadProbe checks --probe, in the one syntax of a check target
// (target.Parse): load takes tls:// and tcp:// only, which the
// lab's and a SOCKS5 proxy's paths carry.
func parseLoadProbe(s string) (string, error) {
	if !strings.HasPrefix(s, "tls://") && !strings.HasPrefix(s, "tcp://") {
		return "", errors.New("want tls://host:port or tcp://host:port")
	}
	_, err := target.Parse(s, "", target.Options{})
	return s, err
}
