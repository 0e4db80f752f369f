package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/loadgen"
	"github.com/tunnelprobe/tunnelprobe/loadgen/rate"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

const specYAML = `
name: custom
seed: 7
duration: 2m
link:
  rate: 20mbit
  delay: 10ms
  queue: 256p
  mtu: 1500
  changes:
    - at: 30s
      rate: 10mbit
      loss: 0.01
      mtu: 1492
  outages:
    - start: 60s
      duration: 30s
    - start: 20s
      duration: 5s
      blip: true
      direction: down
    - start: 100s
      duration: 10s
      mtu: 1280
load:
  conns: 500
  share: 0.9
  ramp: 10s
  direction: both
container:
  start_delay: 3s
configs:
  - name: k8s
    health: {mode: probe}
    prober:
      kind: kubelet
      endpoint: /check/?timeout=9s
      period: 10s
      timeout: 10s
      kubelet_version: "1.30"
      failure_threshold: 3
  - name: docker
    health:
      mode: loop
      timeouts: [2s, 4s]
      heal: true
      heal_backoff: {initial: 6s, step: 5s}
    prober: {kind: docker, endpoint: /, period: 5s, timeout: 5s, start_period: 10s, autoheal: true}
  - name: upstream
    health: {preset: upstream, heal: true}
    prober: {kind: kubelet, handler: tcpSocket}
  - name: exec
    health: {mode: probe}
    prober: {kind: kubelet, handler: exec, exec: [sh, -c, "wget -qO- http://{health}/check/"]}
`

func TestParseReadsEveryField(t *testing.T) {
	s, err := Parse([]byte(specYAML))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "custom" || s.Seed != 7 || s.Duration.Duration != 2*time.Minute ||
		s.Link.Changes[0].At.Duration != 30*time.Second || *s.Link.Changes[0].Loss != 0.01 ||
		s.Link.Outages[0].End() != 90*time.Second || s.Load.Share != 0.9 || s.Load.Direction != loadgen.Both ||
		s.Container.StartDelay.Duration != 3*time.Second || len(s.Configs) != 4 ||
		s.Configs[1].Health.HealBackoff.Step.Duration != 5*time.Second ||
		s.Configs[1].Prober.StartPeriod.Duration != 10*time.Second || !s.Configs[1].Prober.Autoheal ||
		s.Configs[2].Health.Preset != "upstream" || s.Configs[2].Prober.Handler != "tcpSocket" || s.Configs[0].Prober.KubeletVersion != 30 ||
		len(s.Configs[3].Prober.Exec) != 3 || s.Link.Rate != 20*rate.Mbit || s.Link.Queue.Packets != 256 ||
		*s.Link.Changes[0].Rate != 10*rate.Mbit || s.Link.Changes[0].Queue != nil ||
		s.Link.Outages[1].Direction != OutageDown || s.Configs[0].Health.Mode != middleware.ModeProbe ||
		s.Link.MTU != 1500 || *s.Link.Changes[0].MTU != 1492 || s.Link.Outages[2].MTU != 1280 {
		t.Errorf("parsed %+v", s)
	}
	// JSON is YAML too, and a spec survives the round trip.
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse(js)
	if err != nil {
		t.Fatalf("round trip: %v\n%s", err, js)
	}
	js2, _ := json.Marshal(again)
	if string(js) != string(js2) {
		t.Errorf("round trip changed the spec:\n%s\n%s", js, js2)
	}
}

func TestParseRejectsBadSpecs(t *testing.T) {
	for _, tc := range []struct{ from, to, mention string }{
		{"name: custom", "name: custom\nsurprise: 1", `spec: unknown field "surprise" (a spec holds configs, container, duration, link, load, name, seed, tunnel)`},
		{"  rate: 20mbit", "  rate: 20mbit\n  dealy: 2ms", `spec: link: unknown field "dealy" (link holds changes, delay,`},
		{"  rate: 20mbit", "  rate: 20furlongs", `link.rate: rate "20furlongs"`},
		{"  queue: 256p", "  queue: 256 apples", `link.queue: queue "256 apples"`},
		{"      rate: 10mbit", "      rate: fast", `link.changes[0].rate: rate "fast"`},
		{"  direction: both", "  direction: both\n  stream: 0mbit", `load.stream: rate "0mbit"`},
		{"  conns: 500", "  conns: many", "load.conns: json: cannot unmarshal string"},
		{"  ramp: 10s", "  ramp: soon", `load.ramp: want a duration such as "10s", got "soon"`},
		{"duration: 2m", "duration: -2m", "duration"},
		{"duration: 2m", "duration: soon", "duration"},
		{"  conns: 500", "  conns: -5", "load.conns"},
		{"  conns: 500", "  conns: 100000", "load.conns"},
		{"  conns: 500", "  conns: 9223372036854775807", "load.conns"},
		{"  share: 0.9", "  share: 1.5", "load.share"},
		{"  direction: both", "  direction: sideways", `load.direction: unknown direction "sideways"`},
		{"    health: {mode: probe}", "    health: {mode: sometimes}", `configs[0].health.mode: unknown mode "sometimes"`},
		{"      kind: kubelet", "      kind: nomad", "configs[0].prober"},
		{"      endpoint: /check/?timeout=9s", "      endpoint: check", "configs[0].prober"},
		{"  - name: docker", "  - name: k8s", "configs[1].name"},
		{"    - start: 60s", "    - start: 110s", "link.outages[0]"},
		{"    - start: 60s", "    - start: 60s\n      direction: sideways", `link.outages[0].direction: unknown direction "sideways": want both, up or down`},
		// What is required although its zero value would mean something.
		{"  rate: 20mbit\n", "", "link.rate: required"},
		{"  queue: 256p\n", "", "link.queue: required"},
		{"  direction: both", "  direction: both\n  stream: unlimited", `load.stream: "unlimited" is not a positive rate`},
		{"    health: {mode: probe}", "    health: {}", "configs[0].health.mode: required"},
		{"    health: {mode: probe}", "    health: {mode: null}", "configs[0].health.mode: required"},
		{"    health: {mode: probe}", "    health: {preset: \"\"}", "configs[0].health.mode: required"},
		{"  rate: 20mbit\n", "  rate:\n", "link.rate"},
		{"    - at: 30s", "    - at: 5m", "link.changes[0].at"},
		{"  mtu: 1500", "  mtu: 575", "link: mtu: 575 bytes is neither 0 (no limit) nor in 576..65535"},
		{"  mtu: 1500", "  mtu: big", "link.mtu: json: cannot unmarshal string"},
		{"      mtu: 1492", "      mtu: 65536", "link.changes[0]: mtu: 65536 bytes"},
		{"      mtu: 1280", "      mtu: 1480", "link.outages[2].mtu: 1480 bytes is not in 576..1479"},
		{"      mtu: 1280", "      mtu: 100", "link.outages[2].mtu: 100 bytes"},
		{"      mtu: 1280", "      mtu: 1280\n      direction: up", "link.outages[2].direction: an MTU black hole holds both ways"},
		{"      heal: true", "      heal: true\n      failure_threshold: -1", "configs[1].health"},
		{"    health: {mode: probe}", "    health: {mode: probe, heal: true}", "configs[0].health"},
		{"{preset: upstream, heal: true}", "{preset: gluetun}", "configs[2].health: preset"},
		{"{preset: upstream, heal: true}", "{preset: upstream, mode: probe}", "configs[2].health: mode"},
		{"{preset: upstream, heal: true}", "{preset: upstream, period: 1s}", "configs[2].health: preset: upstream fixes"},
		{"handler: tcpSocket", "handler: http", "configs[2].prober: handler"},
		{"{kind: kubelet, handler: tcpSocket}", "{kind: docker, handler: grpc}", "configs[2].prober: handler"},
		{"{kind: kubelet, handler: tcpSocket}", "{kind: kubelet, handler: tcpSocket, service: tunnel}", "configs[2].prober: service"},
		{"{kind: kubelet, handler: tcpSocket}", "{kind: docker, handler: tcpSocket}", "configs[2].prober: handler"},
		{"{kind: kubelet, handler: tcpSocket}", "{kind: kubelet, handler: tcpSocket, exec: [x]}", "configs[2].prober: exec"},
		{"handler: exec, exec: [sh, -c", "handler: exec, exe: [sh, -c", `configs[3].prober: unknown field "exe"`},
		{"handler: exec, exec:", "exec:", "configs[3].prober: exec"},
		{"      failure_threshold: 3\n", "      failure_threshold: 3\n      autoheal: true\n", "configs[0].prober: autoheal"},
		{`kubelet_version: "1.30"`, `kubelet_version: "1.19"`, "configs[0].prober.kubelet_version: kubelet version 1.19 is not modelled: want 1.20 to 1.37"},
		{`kubelet_version: "1.30"`, `kubelet_version: 1.30`, `configs[0].prober.kubelet_version: kubelet version 1.3: want a string such as "1.30"`},
		{"start_period: 10s, autoheal: true}", `start_period: 10s, autoheal: true, kubelet_version: "1.30"}`, "configs[1].prober: kubelet_version: only for kind kubelet"},
	} {
		if !strings.Contains(specYAML, tc.from) {
			t.Fatalf("test spec lacks %q", tc.from)
		}
		_, err := Parse([]byte(strings.Replace(specYAML, tc.from, tc.to, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%q: error %v, want one naming %s", tc.to, err, tc.mention)
		}
	}
	for _, doc := range []string{"", "[1, 2]", "name: a\n---\nname: b", "duration: [", "{"} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%q parsed", doc)
		}
	}
}

// The link's MTU at any time is what the link and its last change say,
// lowered by the MTU black holes holding then: a change inside a black
// hole takes effect at its end, and the end of one restores the others'.
func TestLinkMTUAt(t *testing.T) {
	mtu := func(n int) *int { return &n }
	l := LinkSpec{
		MTU:     1500,
		Changes: []LinkChange{{At: D(30 * time.Second), MTU: mtu(0)}, {At: D(10 * time.Second), MTU: mtu(1400)}, {At: D(10 * time.Second), Rate: new(harness.Rate(1))}},
		Outages: []Window{
			{Start: D(20 * time.Second), Duration: D(20 * time.Second), MTU: 1280},
			{Start: D(25 * time.Second), Duration: D(2 * time.Second), MTU: 1000},
			{Start: D(26 * time.Second), Duration: D(time.Minute)}, // drops everything: no MTU of its own
		},
	}
	for at, want := range map[time.Duration]int{0: 1500, 10: 1400, 20: 1280, 25: 1000, 27: 1280, 30: 1280, 40: 0} {
		if got := l.mtuAt(at * time.Second); got != want {
			t.Errorf("at %ds: MTU %d, want %d", at, got, want)
		}
	}
}

func TestParseRefusesMoreThanOneDocument(t *testing.T) {
	if _, err := Parse([]byte(specYAML)); err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{specYAML + "\n---\n" + specYAML, specYAML + "\n---\nname: other\n", "---\n" + specYAML + "\n---\n"} {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), "YAML documents, want one") {
			t.Errorf("a spec followed by another document: %v, want it refused", err)
		}
	}
	// One document between markers is one document.
	if _, err := Parse([]byte("---\n" + specYAML + "\n...\n")); err != nil {
		t.Errorf("one document with markers: %v", err)
	}
}

func TestBuiltInSuitesAreValid(t *testing.T) {
	for _, s := range []Spec{DefaultSuite(), QuickSuite(), BrownoutSuite(), DeepQueueSuite()} {
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if len(s.Configs) != 7 || len(s.Link.Outages) != 1 {
			t.Errorf("%s: %d configurations, %d outages", s.Name, len(s.Configs), len(s.Link.Outages))
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(specYAML))
	f.Add([]byte(`{"name":"x","duration":"1s","configs":[]}`))
	f.Add([]byte("duration: 1h\nlink: {rate: 1kbit, queue: 1p}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		// Whatever parses is valid and survives a round trip.
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid spec: %v", err)
		}
		js, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(js); err != nil {
			t.Fatalf("round trip of %s: %v", js, err)
		}
	})
}

// The example spec in docs/scenarios.md must stay valid, and be the file
// docs/examples/mine.yaml that the README runs.
func TestDocumentedSpecParses(t *testing.T) {
	readme, err := os.ReadFile("../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```yaml\n")
	doc, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("no yaml block in docs/scenarios.md")
	}
	if _, err := Parse([]byte(doc)); err != nil {
		t.Errorf("the documented spec: %v", err)
	}
	file, err := os.ReadFile("../docs/examples/mine.yaml")
	if err != nil || string(file) != doc {
		t.Errorf("docs/examples/mine.yaml differs from the spec in docs/scenarios.md (%v)", err)
	}
	if _, err := ReadSpec("../docs/examples/mine.yaml"); err != nil {
		t.Errorf("docs/examples/mine.yaml: %v", err)
	}
}

// A spec file over the size limit is refused before it is parsed, naming
// the file, its size and the limit.
func TestReadSpecRefusesAnOversizedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(specYAML+strings.Repeat("# padding\n", 110_000)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadSpec(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("error %v; want the file and the limit of 1048576 bytes named", err)
	}
	if _, err := Parse([]byte(specYAML + strings.Repeat("# padding\n", 110_000))); err == nil || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("Parse of an oversized spec: %v; want the limit named", err)
	}
}

// Counts beyond the limits are refused at once, without an error per
// entry; within them a spec parses.
func TestParseLimitsCounts(t *testing.T) {
	spec := func(configs, outages, changes int) string {
		var b strings.Builder
		b.WriteString("name: counts\nduration: 168h\nlink:\n  rate: 20mbit\n  queue: 256p\n  outages:\n")
		for i := range outages {
			fmt.Fprintf(&b, "    - {start: %dm, duration: 1m}\n", 10*i)
		}
		b.WriteString("  changes:\n")
		for i := range changes {
			fmt.Fprintf(&b, "    - {at: %ds, rate: 10mbit}\n", i)
		}
		b.WriteString("configs:\n")
		for i := range configs {
			fmt.Fprintf(&b, "  - {name: c%d, health: {mode: probe}, prober: {kind: kubelet, endpoint: /check/}}\n", i)
		}
		return b.String()
	}
	if _, err := Parse([]byte(spec(64, 1000, 10_000))); err != nil {
		t.Fatalf("a spec at every limit: %v", err)
	}
	for _, tc := range []struct {
		configs, outages, changes int
		mention                   string
	}{
		{65, 1, 1, "configs: 65 configurations, at most 64"},
		{1, 1001, 1, "link.outages: 1001 outages, at most 1000"},
		{1, 1, 10_001, "link.changes: 10001 changes, at most 10000"},
	} {
		_, err := Parse([]byte(spec(tc.configs, tc.outages, tc.changes)))
		if err == nil || !strings.Contains(err.Error(), tc.mention) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%d configurations, %d outages, %d changes: %v; want one line saying %q", tc.configs, tc.outages, tc.changes, err, tc.mention)
		}
	}
	if _, err := Parse([]byte(strings.Replace(specYAML, "duration: 2m", "duration: 169h", 1))); err == nil || !strings.Contains(err.Error(), "duration: 169h0m0s is longer than 168h0m0s") {
		t.Errorf("a run of 169 h: %v; want it refused", err)
	}
}

// Values their types refuse are reported together, each under its path,
// as many as Validate reports and then a count of the rest.
func TestParseNamesEveryValueItsTypeRefuses(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: bad\nduration: 1m\nlink: {rate: 1 furlong, queue: 1p}\nconfigs:\n")
	for i := range 12 {
		fmt.Fprintf(&b, "  - {name: c%d, health: {mode: mode%d}, prober: {kind: kubelet}}\n", i, i)
	}
	_, err := Parse([]byte(b.String()))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 11 || lines[0] != `spec: link.rate: rate "1 furlong": unknown unit or bad number: invalid value` ||
		lines[1] != `spec: configs[0].health.mode: unknown mode "mode0": want loop, probe or auto` ||
		lines[10] != "spec: ... and 3 more errors" {
		t.Errorf("%d lines:\n%v", len(lines), err)
	}
	// Counts over their limits still come alone, before any entry.
	for i := 12; i < 65; i++ {
		fmt.Fprintf(&b, "  - {name: c%d, health: {mode: mode%d}, prober: {kind: kubelet}}\n", i, i)
	}
	if _, err := Parse([]byte(b.String())); err == nil || err.Error() != "spec: configs: 65 configurations, at most 64" {
		t.Errorf("65 configurations with bad modes: %v", err)
	}
}

// A spec writes its rates, queues, modes and directions as text, and leaves
// out what a change does not change.
func TestSpecWritesText(t *testing.T) {
	s := BrownoutSuite()
	s.Link.Outages[0].Direction = OutageUp
	s.Load.Direction, s.Load.Stream = loadgen.Both, rate.Mbit
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"rate":"20mbit"`, `"queue":"256p"`, `{"at":"40s","rate":"2mbit"}`, `"direction":"up"`,
		`"direction":"both"`, `"stream":"1mbit"`, `"mode":"probe"`, `"mode":"auto"`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("%s lacks %s", js, want)
		}
	}
	if js, _ := json.Marshal(DefaultSuite().Link); strings.Contains(string(js), "direction") || strings.Contains(string(js), "changes") {
		t.Errorf("unset fields written: %s", js)
	}
}

// Many errors make a few lines and a count of the rest.
func TestValidateCapsItsErrors(t *testing.T) {
	s, err := Parse([]byte(specYAML))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		s.Configs = append(s.Configs, ConfigSpec{Name: fmt.Sprintf("c%d", i), Health: HealthSpec{Preset: "gluetun"}, Prober: s.Configs[0].Prober})
	}
	err = s.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 11 || !strings.Contains(lines[0], "configs[4].health") || lines[10] != "spec: ... and 20 more errors" {
		t.Errorf("%d lines:\n%v\nwant the first 10 and a count of the 20 others", len(lines), err)
	}
}

// An empty outage direction is both, as when it is left out.
func TestParseEmptyOutageDirection(t *testing.T) {
	s, err := Parse([]byte(strings.Replace(specYAML, "    - start: 60s", "    - start: 60s\n      direction: \"\"", 1)))
	if err != nil || s.Link.Outages[0].Direction != OutageBoth {
		t.Fatalf("Parse = %v, %v; want the outage in both directions", s.Link.Outages, err)
	}
}

// A key given twice is refused, naming its line: the one YAML library
// specs are read with says so, where a second value used to replace the
// first without a word.
func TestParseRefusesAKeyGivenTwice(t *testing.T) {
	doubled := strings.Replace(specYAML, "duration: 2m", "duration: 2m\nduration: 3m", 1)
	if _, err := Parse([]byte(doubled)); err == nil || !strings.Contains(err.Error(), `mapping key "duration" already defined at line`) {
		t.Errorf("a key twice: %v", err)
	}
}

// A YAML syntax error names the line it was found on, as it did when specs
// were read through sigs.k8s.io/yaml.
func TestParseYAMLSyntaxErrorNamesItsLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"name: x\nlink:\n  rate: [\n", "spec: yaml: line 3: did not find expected node content"},
		{"name: x\n  bad: indent\n", "spec: yaml: line 2: mapping values are not allowed in this context"},
	} {
		if _, err := Parse([]byte(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

// yes, no, on and off read as booleans where they stand unquoted, as in the
// YAML 1.1 that Kubernetes' YAML reads and specs were first read with;
// quoted they stay text, which a boolean refuses by its field's name.
func TestParseReadsYAML11Booleans(t *testing.T) {
	for _, tc := range []struct {
		word string
		want bool
	}{{"yes", true}, {"On", true}, {"NO", false}, {"off", false}} {
		in := strings.Replace(specYAML, "blip: true", "blip: "+tc.word, 1)
		s, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("blip: %s: %v", tc.word, err)
		}
		if got := s.Link.Outages[1].Blip; got != tc.want {
			t.Errorf("blip: %s read as %v", tc.word, got)
		}
	}
	quoted := strings.Replace(specYAML, "blip: true", `blip: "yes"`, 1)
	if _, err := Parse([]byte(quoted)); err == nil || !strings.Contains(err.Error(), "link.outages[1].blip") {
		t.Errorf(`blip: "yes": %v, want a refusal naming link.outages[1].blip`, err)
	}
}

// The labs' buffers are sized for the link's fastest rate over the run.
func TestLinkFastest(t *testing.T) {
	s := DefaultSuite().Link
	if got := s.fastest(); got != s.Rate {
		t.Errorf("default suite: %v, want %v", got, s.Rate)
	}
	brown := BrownoutSuite().Link
	if got := brown.fastest(); got != 20*rate.Mbit {
		t.Errorf("brownout: %v, want 20 Mbit/s (its rate before and after)", got)
	}
	brown.Changes = append(brown.Changes, LinkChange{Rate: new(harness.Rate(0))})
	if got := brown.fastest(); got != 0 {
		t.Errorf("a link unlimited at some time: %v, want 0 (unlimited)", got)
	}
}
