package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
)

// tunnelFlags choose the kind of tunnel of lab and load --lab.
type tunnelFlags struct{ kind, transport string }

// registerTunnelFlags registers --tunnel and --transport on fs, each usage
// starting with scope ("with --lab: ").
func registerTunnelFlags(fs *flag.FlagSet, scope string) *tunnelFlags {
	t := &tunnelFlags{}
	fs.Var(cliflag.Choice(&t.kind, "wireguard", "wireguard", "openvpn"), "tunnel", scope+"the `kind` of tunnel: wireguard (user space, no root) or openvpn\n"+
		"(the real openvpn on kernel TUN devices in namespaces of the lab's own: root, /dev/net/tun, the openvpn program)")
	fs.Var(cliflag.Choice(&t.transport, "udp", "udp", "tcp"), "transport", scope+"with --tunnel openvpn: its `transport`, udp or tcp (every flow inside one TCP connection)")
	return t
}

// String names the tunnel as the lab prints it: "wireguard",
// "openvpn/udp", "openvpn/tcp".
func (t *tunnelFlags) String() string {
	if t.kind == "openvpn" {
		return t.kind + "/" + t.transport
	}
	return t.kind
}

// labTunnel is a lab's tunnel as the commands use it.
type labTunnel interface {
	harness.Tunnel
	CA() *harness.CA
	TLSAddr() netip.AddrPort
}

// check returns a usage error naming the flag: --transport without
// --tunnel openvpn, or what this machine lacks for an OpenVPN lab.
func (t *tunnelFlags) check(given map[string]bool) error {
	if t.kind != "openvpn" {
		if given["transport"] {
			return fmt.Errorf("flag --transport is for --tunnel openvpn")
		}
		return nil
	}
	if err := harness.OpenVPNAvailable(""); err != nil {
		return fmt.Errorf("invalid value %q for flag --tunnel: %w", t.kind, err)
	}
	return nil
}

// start starts the tunnel over a link of lf's settings.
func (t *tunnelFlags) start(ctx context.Context, lf *linkFlags) (labTunnel, error) {
	var tun labTunnel
	if t.kind == "openvpn" {
		tun = harness.NewOpenVPN(harness.OpenVPNConfig{Link: lf.set, Seed: lf.seed, Transport: t.transport})
	} else {
		tun = harness.New(harness.Config{Link: lf.set, Seed: lf.seed})
	}
	if err := tun.Start(ctx); err != nil {
		return nil, err
	}
	return tun, nil
}
