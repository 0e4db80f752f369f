package main

import (
	"context"
	"io"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// childConfig returns the whole of a level of conns connections as the
// data children run, to be split over them.
func childConfig(f *loadFlags, p *loadPath, conns int) loadgen.ChildConfig {
	return loadgen.ChildConfig{
		Target: p.target, Conns: conns, ConnectRate: f.connectRate, Ramp: f.ramp, Duration: f.duration,
		Rate: f.rate.bits, Direction: f.direction, NoReconnect: !f.reconnect, Sources: f.sources.addrs,
		SOCKS5: p.childSOCKS5, Probe: p.childProbe, ProbeCAPEM: p.childCAPEM, ProbeInsecure: f.tlsInsecure,
		ProbeEvery: f.probeEvery, ProbeTimeout: f.probeTO,
	}
}

// runProcs runs one level of conns connections over --procs children of
// this program (loadgen.Fleet), each told its share of childConfig as data,
// and merges their results. The end of ctx stops the children as Ctrl-C
// would, and what they measured is still merged.
func runProcs(ctx context.Context, f *loadFlags, p *loadPath, conns int, onSecond func(loadgen.Second), stderr io.Writer) (loadgen.Result, error) {
	command, err := childCommand("load", stderr)
	if err != nil {
		return loadgen.Result{}, err
	}
	fleet := loadgen.Fleet{Command: command, OnSecond: onSecond, StartTimeout: childStartTimeout}
	return fleet.Run(ctx, childConfig(f, p, conns), f.procs)
}
