package serveflags

import (
	"flag"
	"io"

	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

// Lab are a lab role's --serve and, behind it, serve's monitor and log
// flags: the health server beside the client peer, its check fixed to the
// TLS target through the tunnel.
type Lab struct {
	Flags
	// Addr is --serve: where the health server listens; empty for none.
	Addr     string
	evidence bool
	heal     bool
	cfg      server.Config
}

// RegisterLab registers a lab role's health flags on fs; target names what
// its check checks, for the help.
func (h *Lab) RegisterLab(fs *flag.FlagSet, target string) {
	h.RegisterMonitor(fs)
	h.RegisterLog(fs)
	fs.Var(cliflag.Addr(&h.Addr, "", true), "serve", "also run the health server on this `address`, checking "+target+" through the tunnel\n"+
		"with the mode, timeout and threshold flags; its heal restarts the client peer unless --heal-cmd or --heal-http is set")
	fs.BoolVar(&h.evidence, "evidence", false, "with --serve: prove the tunnel alive with a light probe (an ICMP echo of the server peer) and\n"+
		"read the client peer's counters (see --evidence-window)")
	fs.BoolVar(&h.heal, "heal", true, "with --serve: heal an unhealthy tunnel in loop mode; --heal=false never heals (the upstream's restarts turned off)")
}

// Configure builds the server configuration from the flags of fs, before
// the role starts, logging to w; an error is a usage error.
func (h *Lab) Configure(fs *flag.FlagSet, w io.Writer) (err error) {
	h.cfg, err = h.ServerConfig(fs, w)
	return err
}

// TunnelClient is the client side of a lab's tunnel, as the health server
// beside it sees it: a harness.Client, or a whole tunnel (harness.Lab,
// harness.OpenVPN).
type TunnelClient interface {
	LightProbe() middleware.LightProbe
	SmallCheck() check.Checker
	middleware.CounterSource
	middleware.DeliverySource
}

// Server returns the health server of checker, healed by restart unless
// --heal-cmd or --heal-http is set and with --evidence from the client's
// counters, or nil without --serve. An error is a usage error.
func (h *Lab) Server(checker check.Checker, restart middleware.HealFunc, client TunnelClient) (*server.Server, error) {
	if h.Addr == "" {
		return nil, nil
	}
	cfg := h.cfg
	cfg.Monitor.Heal = restart // what a VPN restart is in the lab; --heal-cmd or --heal-http replaces it
	if !h.heal {
		cfg.Monitor.Heal, cfg.HealCommand, cfg.HealRequests = nil, "", nil
	}
	if h.evidence {
		probe := client.LightProbe()
		if err := h.SetEvidence(&cfg, probe, client, client); err != nil {
			return nil, err
		}
	}
	h.ApplyPreset(&cfg, client.SmallCheck(), checker)
	return server.New(checker, cfg)
}
