package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// Duration is a time.Duration written as "10s" or "1m30s" in specs.
type Duration struct{ time.Duration }

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"10s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as \"10s\", got %q", s)
	}
	d.Duration = v
	return nil
}

// D is shorthand for a Duration in Go code.
func D(d time.Duration) Duration { return Duration{d} }

// Spec describes one scenario: a link over time, a load, and the health
// configurations to compare on it. Every configuration runs on its own lab
// with the same link and load, side by side.
type Spec struct {
	Name string `json:"name"`
	// Seed makes the run repeatable: the link's loss, the probers' initial
	// jitter.
	Seed uint64 `json:"seed"`
	// Duration is the whole run, ramp and outages included.
	Duration  Duration      `json:"duration"`
	Link      LinkSpec      `json:"link"`
	Load      LoadSpec      `json:"load"`
	Container ContainerSpec `json:"container"`
	Configs   []ConfigSpec  `json:"configs"`
}

// LinkSpec is the shaped link at the start and its changes over time.
type LinkSpec struct {
	Rate  string   `json:"rate"`  // "20mbit", "5MB/s"
	Delay Duration `json:"delay"` // one way
	Queue string   `json:"queue"` // "256p", "256KB"
	Loss  float64  `json:"loss"`
	// Changes alter the link at given times after the start.
	Changes []LinkChange `json:"changes,omitempty"`
	// Outages are windows in which the link drops everything, in both
	// directions or, with Direction, in one.
	Outages []Window `json:"outages,omitempty"`
	// ServerKeepalive, when set, makes the far side (the server peer)
	// send WireGuard keepalives on its own at this interval, whether or
	// not it hears the client, as a peer with PersistentKeepalive does.
	ServerKeepalive Duration `json:"server_keepalive,omitempty"`
}

// LinkChange sets the fields it names at At; empty fields stay as they were.
type LinkChange struct {
	At    Duration  `json:"at"`
	Rate  string    `json:"rate,omitempty"`
	Delay *Duration `json:"delay,omitempty"`
	Queue string    `json:"queue,omitempty"`
	Loss  *float64  `json:"loss,omitempty"`
}

// Window is a span of the run: an outage.
type Window struct {
	Start    Duration `json:"start"`
	Duration Duration `json:"duration"`
	// Direction is what the outage drops: "both" (the default), "up"
	// (client to server only) or "down" (server to client only).
	Direction string `json:"direction,omitempty"`
	// Blip marks a short outage the tunnel survives by itself (about
	// 10 s): nothing should act on it. The link still counts as working
	// through it; restarts and heals from its start until BlipGrace
	// after its end are counted apart, as blip actions.
	Blip bool `json:"blip,omitempty"`
}

// BlipGrace is how long after a blip ends a restart or heal is still put
// down to it: a kubelet's three failed probes 10 s apart can act that
// late.
const BlipGrace = 30 * time.Second

// apply sets the outage's direction on set (down or not).
func (w Window) apply(set *harness.Settings, down bool) {
	switch w.Direction {
	case "up":
		set.UplinkDown = down
	case "down":
		set.DownlinkDown = down
	default:
		set.Down = down
	}
}

// workingEnd is when the link stops working: the first outage's start
// (blips do not count), or the end of the run.
func (s Spec) workingEnd() time.Duration {
	end := s.Duration.Duration
	for _, w := range s.Link.Outages {
		if !w.Blip {
			end = min(end, w.Start.Duration)
		}
	}
	return end
}

// End returns when w ends.
func (w Window) End() time.Duration { return w.Start.Duration + w.Duration.Duration }

// LoadSpec is the traffic through each lab's tunnel.
type LoadSpec struct {
	Conns int `json:"conns"`
	// Share, when positive, paces the load at that share of the link's
	// rate; zero is greedy.
	Share     float64  `json:"share,omitempty"`
	Ramp      Duration `json:"ramp"`
	Direction string   `json:"direction,omitempty"` // up (default), down, both
	// Stream, when set, is the rate of a one-way UDP stream the far side
	// sends into the tunnel all run long ("1mbit"), answered by nothing:
	// a video stream, a QUIC server sending until its idle timeout.
	Stream string `json:"stream,omitempty"`
}

// ContainerSpec is how a restarted container comes back.
type ContainerSpec struct {
	// StartDelay is how long a container takes from the kill to serving
	// again (tunnel up, health server listening). Our containers stop at
	// once on SIGTERM, so the kill's grace period never comes into play.
	StartDelay Duration `json:"start_delay"`
}

// ConfigSpec is one health configuration under test.
type ConfigSpec struct {
	Name   string     `json:"name"`
	Health HealthSpec `json:"health"`
	Prober ProberSpec `json:"prober"`
}

// HealthSpec configures the health server (middleware.Config).
type HealthSpec struct {
	// Preset "upstream" is the upstream VPN client's current check
	// (preset.Upstream through the lab's tunnel: an ICMP echo of the
	// server peer each minute, the TLS check every 5 minutes); its timings
	// are fixed, so it takes no period, timeouts, threshold, back-off or
	// evidence, and Mode is loop. Heal turns its restarts on.
	Preset           string            `json:"preset,omitempty"`
	Mode             string            `json:"mode"` // loop, probe, auto
	Period           Duration          `json:"period,omitempty"`
	Timeouts         middleware.Ladder `json:"timeouts,omitempty"`
	FailureThreshold int               `json:"failure_threshold,omitempty"`
	// Heal makes the loop restart the tunnel (the lab's client peer) while
	// unhealthy, with the reference back-off unless HealBackoff is set.
	Heal        bool         `json:"heal,omitempty"`
	HealBackoff *BackoffSpec `json:"heal_backoff,omitempty"`
	// Evidence lets the lab's light probe (an ICMP echo of the server
	// peer) and the client peer's counters decide checks first
	// (middleware.Evidence); nil: every check is active.
	Evidence *EvidenceSpec `json:"evidence,omitempty"`
}

// EvidenceSpec is middleware.Evidence in a spec; its light probe and
// counters are the lab's client peer's. Zero fields take the middleware's
// defaults.
type EvidenceSpec struct {
	// Window is the tolerance: how long the tunnel may go without an
	// answer before a check fails.
	Window   Duration `json:"window,omitempty"`
	Interval Duration `json:"interval,omitempty"`
	// MaxLoss, when set, fails checks on the probes' loss above it.
	MaxLoss float64 `json:"max_loss,omitempty"`
}

// BackoffSpec is middleware.HealBackoff in a spec.
type BackoffSpec struct {
	Initial Duration `json:"initial"`
	Step    Duration `json:"step"`
}

// ProberSpec configures the orchestrator's prober.
type ProberSpec struct {
	Kind string `json:"kind"` // kubelet, docker
	// Handler is the kubelet probe's handler: httpGet (the default) GETs
	// Endpoint, tcpSocket connects to the health server's port, exec runs
	// Exec.
	Handler string `json:"handler,omitempty"`
	// Endpoint is the health server path an httpGet probe and Docker
	// probe: "/", "/check/", "/?wait=8s", "/check/?timeout=9s".
	Endpoint string `json:"endpoint,omitempty"`
	// Exec is the exec handler's command and arguments, run on this
	// machine; "{health}" in them stands for the health server's
	// host:port.
	Exec []string `json:"exec,omitempty"`
	// Autoheal makes a Docker prober restart the container when it turns
	// unhealthy, as an autoheal container does; Docker alone only marks
	// it.
	Autoheal         bool     `json:"autoheal,omitempty"`
	Period           Duration `json:"period,omitempty"`
	Timeout          Duration `json:"timeout,omitempty"`
	InitialDelay     Duration `json:"initial_delay,omitempty"`
	FailureThreshold int      `json:"failure_threshold,omitempty"`
	SuccessThreshold int      `json:"success_threshold,omitempty"`
	// StartPeriod is Docker's --start-period.
	StartPeriod Duration `json:"start_period,omitempty"`
}

// MaxSpecBytes bounds a spec, checked before it is read or parsed: parsing
// allocates about a hundred times a spec's size, so an 80 MB spec held
// 5.4 GB for 41 s before it was refused. The built-in suites are 2 KiB as
// JSON; a spec at every count limit below (64 configurations, 1,000
// outages, 10,000 link changes, every field written out) is about 600 KiB
// and parses in 0.2 s; 1 MiB leaves room for comments.
const MaxSpecBytes = 1 << 20

// The most entries of each kind a spec may have, checked before any entry
// is: past them, a spec is refused with one error per count rather than
// one per entry.
const (
	// MaxConfigs bounds the configurations: each runs on a lab of its own
	// (WireGuard peers, a shaped link, a health server and a prober), all
	// side by side in one process; the built-in suites' seven keep a
	// 2-core machine well below saturation, and 64 is nine times that.
	MaxConfigs = 64
	// MaxOutages bounds link.outages: an outage every 10 minutes for the
	// longest run (MaxDuration); each is applied to every lab and reported
	// for every configuration.
	MaxOutages = 1_000
	// MaxLinkChanges bounds link.changes: a change a minute for the
	// longest run.
	MaxLinkChanges = 10_000
)

// MaxDuration bounds a spec's duration, and a whole `tunnelprobe scenario`
// command (every pass of --repeat): a week. A run holds its timelines in
// memory until it ends, and a longer one would more likely be cut short
// by the machine than measure anything a week does not.
const MaxDuration = 7 * 24 * time.Hour

// MaxSpecErrors is how many errors Validate lists; it counts the rest.
const MaxSpecErrors = 10

// ReadSpec reads the spec in file, YAML or JSON, as Parse does; an error
// names the file. A file over MaxSpecBytes is refused before it is read.
func ReadSpec(file string) (Spec, error) {
	f, err := os.Open(file)
	if err != nil {
		return Spec{}, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxSpecBytes {
		return Spec{}, fmt.Errorf("%s: %d bytes, more than the %d (1 MiB) a spec may hold", file, st.Size(), MaxSpecBytes)
	}
	// A pipe has no size to check: read one byte past the limit at most.
	data, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return Spec{}, err
	}
	spec, err := Parse(data)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", file, err)
	}
	return spec, nil
}

// Parse reads a spec from YAML or JSON. Unknown fields are errors, and so is
// every value out of range; errors name the field. A spec over
// MaxSpecBytes is refused unparsed.
func Parse(data []byte) (Spec, error) {
	if len(data) > MaxSpecBytes {
		return Spec{}, fmt.Errorf("spec: more than the %d bytes (1 MiB) a spec may hold", MaxSpecBytes)
	}
	// YAMLToJSON reads the first document only: the others would be
	// dropped without a word.
	if n, err := yamlDocuments(data); err == nil && n > 1 {
		return Spec{}, fmt.Errorf("spec: %d YAML documents, want one", n)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return Spec{}, fmt.Errorf("spec: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("spec: %w", err)
	}
	if err := dec.Decode(new(json.RawMessage)); !errors.Is(err, io.EOF) {
		return Spec{}, errors.New("spec: more than one document")
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// yamlDocuments counts the YAML documents in data. Its error is left to
// the parser that follows, which names the line.
func yamlDocuments(data []byte) (int, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		var doc yamlv3.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

// MaxLoadConns bounds load.conns times the configurations, whose loads run
// side by side: the default suite's 2,000 connections for each of 4 peaked
// at 1.8 GiB in one process, so 40,000 would take some 9 GiB of the 24 GiB
// machine, and the container suite would need more descriptors than its
// SOCKS5 ingresses may open.
const MaxLoadConns = 40_000

// Validate reports the fields that are out of range, each named by its
// path: the first MaxSpecErrors of them, then how many more there are.
// Counts over their limits (MaxConfigs, MaxOutages, MaxLinkChanges) are
// reported alone, before any entry is looked at.
func (s Spec) Validate() error {
	var errs specErrors
	for _, c := range []struct {
		path, what string
		n, most    int
	}{
		{"configs", "configurations", len(s.Configs), MaxConfigs},
		{"link.outages", "outages", len(s.Link.Outages), MaxOutages},
		{"link.changes", "changes", len(s.Link.Changes), MaxLinkChanges},
	} {
		if c.n > c.most {
			errs.bad(c.path, "%d %s, at most %d", c.n, c.what, c.most)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	switch d := s.Duration.Duration; {
	case d <= 0:
		errs.bad("duration", "must be positive")
	case d > MaxDuration:
		errs.bad("duration", "%v is longer than %v, the most a run may take", d, MaxDuration)
	}
	s.validateLink(&errs)
	s.validateLoad(&errs)
	if s.Container.StartDelay.Duration < 0 {
		errs.bad("container.start_delay", "%v is negative", s.Container.StartDelay)
	}
	s.validateConfigs(&errs)
	if n := len(errs) - MaxSpecErrors; n > 0 {
		errs = append(errs[:MaxSpecErrors], fmt.Errorf("spec: ... and %d more errors", n))
	}
	return errors.Join(errs...)
}

// specErrors collects Validate's errors, each named by its field's path.
type specErrors []error

func (e *specErrors) bad(path, format string, args ...any) {
	*e = append(*e, fmt.Errorf("spec: %s: %s", path, fmt.Sprintf(format, args...)))
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
		switch w.Direction {
		case "", "both", "up", "down":
		default:
			errs.bad(path+".direction", "%q is not both, up or down", w.Direction)
		}
	}
	if k := s.Link.ServerKeepalive.Duration; k < 0 || k%time.Second != 0 || k > time.Hour {
		errs.bad("link.server_keepalive", "%v is not a whole number of seconds up to an hour", k)
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
	if s.Load.Stream != "" {
		if r, err := harness.ParseRate(s.Load.Stream); err != nil || r <= 0 {
			errs.bad("load.stream", "%q is not a positive rate", s.Load.Stream)
		}
	}
	if s.Load.Direction != "" {
		if _, err := loadgen.ParseDirection(s.Load.Direction); err != nil {
			errs.bad("load.direction", "%v", err)
		}
	}
}

func (s Spec) validateConfigs(errs *specErrors) {
	if len(s.Configs) == 0 {
		errs.bad("configs", "at least one configuration is needed")
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
	}
}

// settings returns the link's initial settings.
func (l LinkSpec) settings() (harness.Settings, error) {
	var set harness.Settings
	var err error
	if set.Rate, err = harness.ParseRate(l.Rate); err != nil {
		return set, fmt.Errorf("rate: %w", err)
	}
	if set.Queue, err = harness.ParseQueue(l.Queue); err != nil {
		return set, fmt.Errorf("queue: %w", err)
	}
	set.Delay, set.Loss = l.Delay.Duration, l.Loss
	return set, set.Validate()
}

// apply returns set with c's fields applied.
func (c LinkChange) apply(set harness.Settings) (harness.Settings, error) {
	var err error
	if c.Rate != "" {
		if set.Rate, err = harness.ParseRate(c.Rate); err != nil {
			return set, fmt.Errorf("rate: %w", err)
		}
	}
	if c.Queue != "" {
		if set.Queue, err = harness.ParseQueue(c.Queue); err != nil {
			return set, fmt.Errorf("queue: %w", err)
		}
	}
	if c.Delay != nil {
		set.Delay = c.Delay.Duration
	}
	if c.Loss != nil {
		set.Loss = *c.Loss
	}
	return set, set.Validate()
}

// config returns the middleware configuration, without Heal, Observer and
// Clock, which the runner sets, and for a preset without its checks, which
// the runner adds through its tunnel.
func (h HealthSpec) config() (middleware.Config, error) {
	switch h.Preset {
	case "":
	case "upstream":
		return h.upstreamConfig()
	default:
		return middleware.Config{}, fmt.Errorf("preset: %q is not upstream", h.Preset)
	}
	var mode middleware.Mode
	if err := mode.UnmarshalText([]byte(h.Mode)); err != nil {
		return middleware.Config{}, fmt.Errorf("mode: %w", err)
	}
	cfg := middleware.Config{Mode: mode, Period: h.Period.Duration, FailureThreshold: h.FailureThreshold}
	cfg.Timeouts = h.Timeouts
	if h.HealBackoff != nil {
		if h.HealBackoff.Initial.Duration <= 0 {
			return cfg, errors.New("heal_backoff.initial: must be positive")
		}
		cfg.HealBackoff = middleware.HealBackoff{Initial: h.HealBackoff.Initial.Duration, Step: h.HealBackoff.Step.Duration}
	}
	if h.Heal && mode == middleware.ModeProbe {
		return cfg, errors.New("heal: probe mode never heals")
	}
	valid := cfg
	if h.Evidence != nil {
		cfg.Evidence = &middleware.Evidence{Window: h.Evidence.Window.Duration, Interval: h.Evidence.Interval.Duration, MaxLoss: h.Evidence.MaxLoss}
		e := *cfg.Evidence
		e.Source = middleware.CounterSourceFunc(nil) // the trial's client peer
		valid.Evidence = &e
	}
	// Validate checks the rest and names the field.
	return cfg, valid.Validate()
}

// upstreamConfig is config for the upstream preset.
func (h HealthSpec) upstreamConfig() (middleware.Config, error) {
	if h.Mode != "" && h.Mode != "loop" {
		return middleware.Config{}, fmt.Errorf("mode: the upstream preset is a loop, not %s", h.Mode)
	}
	if h.Period.Duration != 0 || len(h.Timeouts) > 0 || h.FailureThreshold != 0 || h.HealBackoff != nil || h.Evidence != nil {
		return middleware.Config{}, errors.New("preset: upstream fixes its timings: leave period, timeouts, failure_threshold, heal_backoff and evidence out")
	}
	return preset.Upstream(nil), nil
}

// scheduleNeeds is, for the upstream preset with its restarts on, the
// longest its schedule takes to act on a dead tunnel: a small check's
// period, then all its tries. Zero for the other configurations: their
// probes act within seconds, or never.
func (h HealthSpec) scheduleNeeds() time.Duration {
	if h.Preset != "upstream" || !h.Heal {
		return 0
	}
	return preset.UpstreamSmallEvery + preset.UpstreamSmallTries.Total()
}

// The kubelet probe handlers of a spec.
const (
	handlerHTTPGet   = "httpGet"
	handlerTCPSocket = "tcpSocket"
	handlerExec      = "exec"
)

func (p ProberSpec) validate() error {
	switch p.Kind {
	case "kubelet", "docker":
	default:
		return fmt.Errorf("kind: %q is neither kubelet nor docker", p.Kind)
	}
	switch p.Handler {
	case "", handlerHTTPGet:
	case handlerTCPSocket, handlerExec:
		if p.Kind != "kubelet" {
			return fmt.Errorf("handler: %s is a kubelet handler; Docker probes the endpoint", p.Handler)
		}
	default:
		return fmt.Errorf("handler: %q is not httpGet, tcpSocket or exec", p.Handler)
	}
	if (p.Handler == handlerExec) != (len(p.Exec) > 0) {
		return errors.New("exec: give a command with handler exec, and only then")
	}
	if p.Autoheal && p.Kind != "docker" {
		return errors.New("autoheal: only for kind docker (the kubelet restarts by itself)")
	}
	if p.usesEndpoint() {
		if !strings.HasPrefix(p.Endpoint, "/") {
			return fmt.Errorf("endpoint: %q must be a path such as / or /check/", p.Endpoint)
		}
		if err := prober.CheckURL("http://127.0.0.1" + p.Endpoint); err != nil {
			return fmt.Errorf("endpoint: %w", err)
		}
	}
	for name, d := range map[string]Duration{"period": p.Period, "timeout": p.Timeout, "initial_delay": p.InitialDelay, "start_period": p.StartPeriod} {
		if d.Duration < 0 {
			return fmt.Errorf("%s: %v is negative", name, d)
		}
	}
	if p.FailureThreshold < 0 || p.SuccessThreshold < 0 {
		return errors.New("thresholds must not be negative")
	}
	return nil
}

// usesEndpoint reports whether p probes its Endpoint: Docker, and the
// kubelet's httpGet.
func (p ProberSpec) usesEndpoint() bool {
	return p.Kind == "docker" || p.Handler == "" || p.Handler == handlerHTTPGet
}

// kubeletHandler returns the KubeletConfig handler fields of p for a
// health server at hostPort.
func (p ProberSpec) kubeletHandler(hostPort string) (url, tcpSocket string, command []string) {
	switch p.Handler {
	case handlerTCPSocket:
		return "", hostPort, nil
	case handlerExec:
		for _, a := range p.Exec {
			command = append(command, strings.ReplaceAll(a, "{health}", hostPort))
		}
		return "", "", command
	}
	return "http://" + hostPort + p.Endpoint, "", nil
}

// describe names what p probes, for the report.
func (p ProberSpec) describe() string {
	switch p.Handler {
	case handlerTCPSocket:
		return p.Kind + " tcpSocket"
	case handlerExec:
		return p.Kind + " exec " + strings.Join(p.Exec, " ")
	}
	return p.Kind + " " + p.Endpoint
}
