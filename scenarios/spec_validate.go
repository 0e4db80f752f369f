package scenarios

import (
	"errors"
	"fmt"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

// Validate reports the fields that are out of range, each named by its
// path: the first MaxSpecErrors of them, then how many more there are.
// Counts over their limits (MaxConfigs, MaxOutages, MaxLinkChanges) are
// reported alone, before any entry is looked at.
func (s Spec) Validate() error {
	errs := countErrors(len(s.Configs), len(s.Link.Outages), len(s.Link.Changes))
	if len(errs) > 0 {
		return errs.join()
	}
	switch d := s.Duration.Duration; {
	case d <= 0:
		errs.bad("duration", "must be positive")
	case d > MaxDuration:
		errs.bad("duration", "%v is longer than %v, the most a run may take", d, MaxDuration)
	}
	s.validateTunnel(&errs)
	s.validateLink(&errs)
	s.validateLoad(&errs)
	if s.Container.StartDelay.Duration < 0 {
		errs.bad("container.start_delay", "%v is negative", s.Container.StartDelay)
	}
	s.validateConfigs(&errs)
	return errs.join()
}

// countErrors reports the counts over their limits (MaxConfigs,
// MaxOutages, MaxLinkChanges), one error each.
func countErrors(configs, outages, changes int) specErrors {
	var errs specErrors
	for _, c := range []struct {
		path, what string
		n, most    int
	}{
		{"configs", "configurations", configs, MaxConfigs},
		{"link.outages", "outages", outages, MaxOutages},
		{"link.changes", "changes", changes, MaxLinkChanges},
	} {
		if c.n > c.most {
			errs.bad(c.path, "%d %s, at most %d", c.n, c.what, c.most)
		}
	}
	return errs
}

// specErrors collects a spec's errors, each named by its field's path.
type specErrors []error

func (e *specErrors) bad(path, format string, args ...any) {
	if path != "" {
		path += ": "
	}
	*e = append(*e, fmt.Errorf("spec: %s%s", path, fmt.Sprintf(format, args...)))
}

// join returns the first MaxSpecErrors errors, then a count of the rest;
// nil if there are none.
func (e specErrors) join() error {
	if n := len(e) - MaxSpecErrors; n > 0 {
		e = append(e[:MaxSpecErrors:MaxSpecErrors], fmt.Errorf("spec: ... and %d more errors", n))
	}
	return errors.Join(e...)
}

// validateTunnel checks the tunnel's kind and what of the spec only the
// WireGuard lab can do: its far side filters packets by kind (drop) and
// sends keepalives of its own, and the MTU black holes are sized to its
// packets.
func (s Spec) validateTunnel(errs *specErrors) {
	switch t := s.Tunnel; t.Kind {
	case "", TunnelWireGuard:
		if t.Transport != "" {
			errs.bad("tunnel.transport", "%q: only an openvpn tunnel has a transport", t.Transport)
		}
		return
	case TunnelOpenVPN:
		if t.Transport != "" && t.Transport != harness.TransportUDP && t.Transport != harness.TransportTCP {
			errs.bad("tunnel.transport", "%q is neither udp nor tcp", t.Transport)
		}
	default:
		errs.bad("tunnel.kind", "%q is neither wireguard nor openvpn", t.Kind)
		return
	}
	only := func(path string) { errs.bad(path, "only a wireguard tunnel has it, not %s", s.Tunnel) }
	if len(s.Link.Drop) > 0 {
		only("link.drop")
	}
	if s.Link.ServerKeepalive.Duration != 0 {
		only("link.server_keepalive")
	}
	for i, w := range s.Link.Outages {
		if w.MTU != 0 {
			only(fmt.Sprintf("link.outages[%d].mtu", i))
		}
	}
}

func (s Spec) validateLink(errs *specErrors) {
	if _, err := s.Link.settings(); err != nil {
		errs.bad("link", "%v", err)
	}
	for i, c := range s.Link.Changes {
		path := fmt.Sprintf("link.changes[%d]", i)
		if c.At.Duration < 0 || c.At.Duration > s.Duration.Duration {
			errs.bad(path+".at", "%v is outside the run", c.At)
		}
		if _, err := c.apply(harness.Settings{}); err != nil {
			errs.bad(path, "%v", err)
		}
	}
	for i, w := range s.Link.Outages {
		path := fmt.Sprintf("link.outages[%d]", i)
		if w.Start.Duration < 0 || w.Duration.Duration <= 0 || w.End() > s.Duration.Duration {
			errs.bad(path, "must lie within the run and last a positive time")
		}
		if w.Direction < OutageBoth || w.Direction > OutageDown {
			errs.bad(path+".direction", "%v is not both, up or down", w.Direction)
		}
		w.validateMTU(path, errs)
	}
	if len(s.Link.Drop) > MaxOutages {
		errs.bad("link.drop", "%d windows, more than the %d a spec may have", len(s.Link.Drop), MaxOutages)
	}
	for i, w := range s.Link.Drop {
		path := fmt.Sprintf("link.drop[%d]", i)
		if _, err := harness.ParseDropKind(w.Kind); err != nil {
			errs.bad(path+".kind", "%v", err)
		}
		if w.Start.Duration < 0 || w.Duration.Duration < 0 || w.Start.Duration+w.Duration.Duration > s.Duration.Duration {
			errs.bad(path, "must lie within the run")
		}
	}
	if k := s.Link.ServerKeepalive.Duration; k < 0 || k%time.Second != 0 || k > time.Hour {
		errs.bad("link.server_keepalive", "%v is not a whole number of seconds up to an hour", k)
	}
}

// validateMTU checks the MTU of an outage at path: none, or a black hole
// both ways that drops the tunnel's full-size packets.
func (w Window) validateMTU(path string, errs *specErrors) {
	switch {
	case w.MTU == 0:
	case w.MTU < harness.MinMTU || w.MTU >= MTUBlackHole:
		errs.bad(path+".mtu", "%d bytes is not in %d..%d: an MTU black hole drops the tunnel's full-size packets (%d bytes on the link) and carries IPv4's least",
			w.MTU, harness.MinMTU, MTUBlackHole-1, MTUBlackHole)
	case w.Direction != OutageBoth:
		errs.bad(path+".direction", "an MTU black hole holds both ways")
	}
}

func (s Spec) validateLoad(errs *specErrors) {
	switch total := min(s.Load.Conns, MaxLoadConns+1) * max(len(s.Configs), 1); {
	case s.Load.Conns < 0:
		errs.bad("load.conns", "%d is negative", s.Load.Conns)
	case total > MaxLoadConns:
		errs.bad("load.conns", "%d for each of %d configurations is more than the %d connections a run can hold at once",
			s.Load.Conns, len(s.Configs), MaxLoadConns)
	}
	if s.Load.Share < 0 || s.Load.Share > 1 {
		errs.bad("load.share", "%v is outside 0..1", s.Load.Share)
	}
	if s.Load.Ramp.Duration < 0 || s.Load.Ramp.Duration >= s.Duration.Duration && s.Duration.Duration > 0 {
		errs.bad("load.ramp", "must be shorter than the run")
	}
	if r := s.Load.Stream; r < 0 || r > harness.MaxRate {
		errs.bad("load.stream", "%d bit/s is out of range", int64(r))
	}
	if d := s.Load.Direction; d < loadgen.Up || d > loadgen.Both {
		errs.bad("load.direction", "%v is not up, down or both", d)
	}
}

func (s Spec) validateConfigs(errs *specErrors) {
	if len(s.Configs) == 0 {
		errs.bad("configs", "at least one configuration is needed")
	}
	outages := false
	for _, o := range s.Link.Outages {
		outages = outages || !o.Blip
	}
	names := map[string]bool{}
	for i, c := range s.Configs {
		path := fmt.Sprintf("configs[%d]", i)
		switch {
		case c.Name == "":
			errs.bad(path+".name", "is empty")
		case names[c.Name]:
			errs.bad(path+".name", "%q is used twice", c.Name)
		}
		names[c.Name] = true
		if _, err := c.Health.config(); err != nil {
			errs.bad(path+".health", "%v", err)
		}
		if err := c.Prober.validate(); err != nil {
			errs.bad(path+".prober", "%v", err)
		}
		c.Expect.validate(path+".expect", outages, errs)
	}
}

// settings returns the link's initial settings.
func (l LinkSpec) settings() (harness.Settings, error) {
	set := harness.Settings{Rate: l.Rate, Delay: l.Delay.Duration, Queue: l.Queue, Loss: l.Loss, MTU: l.MTU}
	return set, set.Validate()
}

// fastest is the link's fastest rate over the run, 0 if it is ever
// unlimited.
func (l LinkSpec) fastest() harness.Rate {
	r := l.Rate
	for _, c := range l.Changes {
		if c.Rate != nil {
			if *c.Rate <= 0 || r <= 0 {
				return 0
			}
			r = max(r, *c.Rate)
		}
	}
	return r
}

// apply returns set with c's fields applied.
func (c LinkChange) apply(set harness.Settings) (harness.Settings, error) {
	if c.Rate != nil {
		set.Rate = *c.Rate
	}
	if c.Queue != nil {
		set.Queue = *c.Queue
	}
	if c.Delay != nil {
		set.Delay = c.Delay.Duration
	}
	if c.Loss != nil {
		set.Loss = *c.Loss
	}
	if c.MTU != nil {
		set.MTU = *c.MTU
	}
	return set, set.Validate()
}
