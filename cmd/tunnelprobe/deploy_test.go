package main

// Tests of the examples under deploy/: every Kubernetes manifest decodes
// strictly into the k8s.io/api types, every tunnelprobe container's
// arguments and TUNNELPROBE_* variables parse with the real flag sets, and
// the probes point at paths and ports that serve, started with those very
// flags, answers. The Compose file likewise.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/tunnelprobe/tunnelprobe/cmd/tunnelprobe/internal/probeflags"
	"github.com/tunnelprobe/tunnelprobe/cmd/tunnelprobe/internal/serveflags"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

const deployDir = "../../deploy"

// testPodIP stands for status.podIP: serve listens there in the manifests.
// testPodIPs are those of the cluster families a manifest must fit.
const testPodIP = "127.0.0.1"

var testPodIPs = []string{testPodIP, "fd00::5"}

// manifests holds the decoded objects of deploy/kubernetes.
type manifests struct {
	deployments []*appsv1.Deployment
	services    []*corev1.Service
	jobs        []*batchv1.Job
}

// splitYAML returns the documents of a YAML stream, separated by "---".
func splitYAML(b []byte) [][]byte {
	var docs [][]byte
	for doc := range bytes.SplitSeq(b, []byte("\n---")) {
		// Keep documents with content, not only comments.
		for line := range bytes.SplitSeq(doc, []byte("\n")) {
			if l := bytes.TrimSpace(line); len(l) > 0 && l[0] != '#' {
				docs = append(docs, doc)
				break
			}
		}
	}
	return docs
}

// decodeManifest decodes one document strictly: an unknown field, a
// duplicate key or an unknown kind is an error.
func decodeManifest(doc []byte, into *manifests) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 Deployment":
		d := new(appsv1.Deployment)
		into.deployments, obj = append(into.deployments, d), d
	case "v1 Service":
		s := new(corev1.Service)
		into.services, obj = append(into.services, s), s
	case "batch/v1 Job":
		j := new(batchv1.Job)
		into.jobs, obj = append(into.jobs, j), j
	default:
		return fmt.Errorf("unexpected kind %q %q", tm.APIVersion, tm.Kind)
	}
	return yaml.UnmarshalStrict(doc, obj)
}

func loadManifests(t *testing.T) *manifests {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(deployDir, "kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var m manifests
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs := splitYAML(b)
		if len(docs) == 0 {
			t.Errorf("%s: no document", f)
		}
		for i, doc := range docs {
			if err := decodeManifest(doc, &m); err != nil {
				t.Errorf("%s, document %d: %v", filepath.Base(f), i+1, err)
			}
		}
	}
	return &m
}

func TestManifestDecodingIsStrict(t *testing.T) {
	t.Parallel()
	var m manifests
	for _, doc := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nspec:\n  replica: 1\n",
		"apiVersion: v1\nkind: Service\nspec:\n  ports: [{port: 1, tagetPort: 2}]\n",
		"apiVersion: batch/v1\nkind: Job\nspec:\n  parallelism: 1\n  parallelism: 2\n",
		"apiVersion: v1\nkind: Secret\n",
	} {
		if err := decodeManifest([]byte(doc), &m); err == nil {
			t.Errorf("accepted:\n%s", doc)
		}
	}
	if docs := splitYAML([]byte("# only a comment\n---\na: 1\n---\n\n")); len(docs) != 1 {
		t.Errorf("split into %d documents, want 1", len(docs))
	}
}

// k8sVar is a $(VAR) reference in an env value, a command or an argument.
var k8sVar = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expandK8s expands $(VAR) as the kubelet does: a defined variable is
// replaced, an undefined reference is left as it is, and $$ is $.
func expandK8s(s string, vars map[string]string) string {
	return k8sVar.ReplaceAllStringFunc(s, func(ref string) string {
		if ref == "$$" {
			return "$"
		}
		if v, ok := vars[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

// containerEnv returns the container's environment as the kubelet would
// build it for the test: status.podIP is podIP, and an Indexed Job's
// JOB_COMPLETION_INDEX (which the Job controller adds) is index.
func containerEnv(t *testing.T, c corev1.Container, podIP string, indexed bool, index int) map[string]string {
	t.Helper()
	env := map[string]string{}
	if indexed {
		env["JOB_COMPLETION_INDEX"] = strconv.Itoa(index)
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = expandK8s(e.Value, env)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			env[e.Name] = podIP
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "secret"
		default:
			t.Errorf("container %s: env %s: a source the test does not know", c.Name, e.Name)
		}
	}
	return env
}

// commandFlags parses the arguments of a tunnelprobe command line (args[0]
// names the command) with the command's real flag set and env as the
// environment, and checks them as the command would. It returns the flag
// set, the parsed flags (*serveflags.Flags, *loadFlags, *sinkFlags or
// *probeflags.Flags) and the error.
func commandFlags(args []string, env map[string]string) (*flag.FlagSet, any, error) {
	if len(args) == 0 {
		return nil, nil, fmt.Errorf("no command")
	}
	// Named as the binary names it: the variables' names come from it.
	fs := flag.NewFlagSet("tunnelprobe "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	getenv := envMap(env)
	var err error
	switch args[0] {
	case "serve":
		var f serveflags.Flags
		f.Register(fs)
		if err = cliflag.Parse(fs, args[1:], getenv, serveflags.Exclusive...); err == nil {
			if _, err = f.BuildChecks(nil); err == nil {
				_, err = f.ServerConfig(fs, io.Discard)
			}
		}
		return fs, &f, orArgs(fs, err)
	case "load":
		var f loadFlags
		f.register(fs)
		if err = cliflag.Parse(fs, args[1:], getenv, loadExclusive...); err == nil {
			err = f.finish(cliflag.Given(fs))
		}
		return fs, &f, orArgs(fs, err)
	case "sink":
		var f sinkFlags
		f.register(fs)
		err = cliflag.Parse(fs, args[1:], getenv)
		return fs, &f, orArgs(fs, err)
	case "probe":
		var f probeflags.Flags
		f.Register(fs)
		flags, command := probeflags.CutCommand(args[1:])
		if err = cliflag.Parse(fs, flags, getenv, probeflags.Exclusive...); err == nil {
			err = f.Check(fs, len(command) > 0)
		}
		return fs, &f, orArgs(fs, err)
	case "scenario":
		// scenario parses its own flags. With a context that has ended it
		// runs nothing (a matrix stops before its first run): exit 2 is
		// what bad flags give.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var stderr bytes.Buffer
		if code := scenarioCommand(ctx, args[1:], getenv, io.Discard, &stderr); code == 2 {
			return fs, nil, errors.New(stderr.String())
		}
		return fs, nil, nil
	}
	return nil, nil, fmt.Errorf("unknown command %q", args[0])
}

func orArgs(fs *flag.FlagSet, err error) error {
	if err == nil && fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return err
}

// isTunnelprobe tells the containers that run the tunnelprobe binary.
func isTunnelprobe(c corev1.Container) bool {
	return strings.Contains(c.Image, "/tunnelprobe/tunnelprobe:")
}

// mountArgs rewrites paths under the container's volume mounts to
// directories of the test, one per volume, so that flags that check a
// directory find it.
func mountArgs(t *testing.T, c corev1.Container, args []string, root string) []string {
	t.Helper()
	out := slices.Clone(args)
	for _, vm := range c.VolumeMounts {
		dir := filepath.Join(root, vm.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, a := range out {
			if rest, ok := strings.CutPrefix(a, vm.MountPath+"/"); ok {
				out[i] = filepath.Join(dir, rest)
			}
		}
	}
	return out
}

// withFlags returns args without any value of the named flags, then those
// flags with the given values; an empty value drops the flag.
func withFlags(args []string, values map[string]string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if _, ok := values[name]; ok && strings.HasPrefix(args[i], "-") {
			if !hasValue {
				i++ // the value is the next argument
			}
			continue
		}
		out = append(out, args[i])
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range values {
			if !yield(k) {
				return
			}
		}
	}) {
		if values[name] != "" {
			out = append(out, "--"+name, values[name])
		}
	}
	return out
}

// Where the tests run a deploy file's serve here, no tunnel is: its
// interface is left out (every check would be bound to an interface this
// host has not; the binding is tested in namespaces, serve_route_linux_test.go)
// and the light probe sent where nothing answers (192.0.2.0/24 is for
// documentation; a local address is refused), so the --target check, the
// test's own, decides.
var noTunnel = map[string]string{"evidence-iface": "", "light-probe": "tcp://192.0.2.1:9"}

// withoutTunnel returns values with noTunnel's.
func withoutTunnel(values map[string]string) map[string]string {
	out := maps.Clone(values)
	maps.Copy(out, noTunnel)
	return out
}

func TestWithFlags(t *testing.T) {
	t.Parallel()
	got := withFlags([]string{"--target", "a", "--metrics", "--check=tls", "--mode", "probe"}, map[string]string{"target": "b", "check": "tcp"})
	want := []string{"--metrics", "--mode", "probe", "--check", "tcp", "--target", "b"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// podSpecs returns every pod template of m, by the name of its owner.
func (m *manifests) podSpecs() map[string]*corev1.PodTemplateSpec {
	out := map[string]*corev1.PodTemplateSpec{}
	for _, d := range m.deployments {
		out["Deployment "+d.Name] = &d.Spec.Template
	}
	for _, j := range m.jobs {
		out["Job "+j.Name] = &j.Spec.Template
	}
	return out
}

// job returns the Job named name, or fails t.
func (m *manifests) job(t *testing.T, name string) *batchv1.Job {
	t.Helper()
	for _, j := range m.jobs {
		if j.Name == name {
			return j
		}
	}
	t.Fatalf("no Job %s", name)
	return nil
}

// indexed reports whether owner is an Indexed Job.
func (m *manifests) indexed(owner string) bool {
	for _, j := range m.jobs {
		if "Job "+j.Name == owner {
			return j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
		}
	}
	return false
}

func TestKubernetesManifests(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	if len(m.deployments) < 2 || len(m.services) < 1 || len(m.jobs) < 1 {
		t.Fatalf("%d deployments, %d services, %d jobs: want the VPN and the sink, the sink's Service, the load Job",
			len(m.deployments), len(m.services), len(m.jobs))
	}
	for owner, tmpl := range m.podSpecs() {
		containers := append(slices.Clone(tmpl.Spec.InitContainers), tmpl.Spec.Containers...)
		for _, c := range containers {
			if !isTunnelprobe(c) {
				continue
			}
			// On IPv4, IPv6 and dual-stack clusters alike (status.podIP
			// is the primary family's).
			for _, podIP := range testPodIPs {
				t.Run(owner+"/"+c.Name+"/"+podIP, func(t *testing.T) {
					checkContainer(t, c, podIP, m.indexed(owner))
				})
			}
		}
	}
}

// setsFlag reports whether the environment variable name sets a flag of
// fs, by the name the command gives its variables (cliflag.EnvName).
func setsFlag(fs *flag.FlagSet, name string) bool {
	found := false
	fs.VisitAll(func(f *flag.Flag) { found = found || cliflag.EnvName(fs, f.Name) == name })
	return found
}

// checkAddressTargets fails t when serve's arguments args give a --target
// or --light-probe by name: with the VPN client's DNS and firewall
// settings a name may not resolve through a working tunnel, and the check
// would fail it.
func checkAddressTargets(t *testing.T, args []string) {
	t.Helper()
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "--target" && args[i] != "--light-probe" {
			continue
		}
		for host := range strings.SplitSeq(args[i+1], ",") { // --light-probe takes several
			if _, rest, ok := strings.Cut(host, "://"); ok {
				host, _, _ = strings.Cut(rest, "/")
			}
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if _, err := netip.ParseAddr(host); err != nil {
				t.Errorf("%s %s names a host: a name may not resolve through a tunnel that works, and the check would fail it", args[i], args[i+1])
			}
		}
	}
}

// checkContainer parses a tunnelprobe container's arguments and
// environment, with podIP for status.podIP, as its command would.
func checkContainer(t *testing.T, c corev1.Container, podIP string, indexed bool) {
	env := containerEnv(t, c, podIP, indexed, 0)
	if len(c.Command) > 0 {
		t.Errorf("command %q replaces the image's entrypoint; give args only", c.Command)
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = expandK8s(a, env)
	}
	args = mountArgs(t, c, args, t.TempDir())
	fs, parsed, err := commandFlags(args, env)
	if err != nil {
		t.Fatalf("args %q: %v", c.Args, err)
	}
	for name := range env {
		if strings.HasPrefix(name, cliflag.EnvPrefix) && !setsFlag(fs, name) {
			t.Errorf("%s sets no flag of %s", name, args[0])
		}
	}
	if f, ok := parsed.(*serveflags.Flags); ok && f.Listen != ":9999" {
		if host, _, err := net.SplitHostPort(f.Listen); err != nil || host != podIP {
			t.Errorf("serve listens on %q, want the pod IP %s", f.Listen, podIP)
		}
	}
}

// vpnDeployments returns the Deployments named vpn by the VPN type their
// VPN container's VPN_TYPE names: one file a type, the same Deployment.
func vpnDeployments(t *testing.T, m *manifests) map[string]*appsv1.Deployment {
	t.Helper()
	out := map[string]*appsv1.Deployment{}
	for _, d := range m.deployments {
		if d.Name != "vpn" {
			continue
		}
		_, vpn := vpnPod(t, &d.Spec.Template)
		vpnType := containerEnv(t, *vpn, testPodIP, false, 0)["VPN_TYPE"]
		if out[vpnType] != nil {
			t.Errorf("two Deployments vpn with VPN_TYPE %q", vpnType)
		}
		out[vpnType] = d
	}
	if len(out) == 0 {
		t.Fatal("no Deployment vpn")
	}
	return out
}

// vpnPod returns the serve sidecar and the VPN container (named vpn) of
// the pod tmpl, or fails t.
func vpnPod(t *testing.T, tmpl *corev1.PodTemplateSpec) (sidecar, vpn *corev1.Container) {
	t.Helper()
	for i, c := range tmpl.Spec.InitContainers {
		if isTunnelprobe(c) && len(c.Args) > 0 && c.Args[0] == "serve" {
			sidecar = &tmpl.Spec.InitContainers[i]
		}
	}
	for i, c := range tmpl.Spec.Containers {
		if c.Name == "vpn" {
			vpn = &tmpl.Spec.Containers[i]
		}
	}
	if sidecar == nil || vpn == nil {
		t.Fatalf("serve sidecar %v, VPN container %v: want both", sidecar != nil, vpn != nil)
	}
	return sidecar, vpn
}

// TestVPNDeploymentProbes starts serve with the sidecar's own flags and
// environment and sends it what the kubelet and Prometheus would, for each
// VPN type's Deployment.
func TestVPNDeploymentProbes(t *testing.T) {
	t.Parallel()
	for vpnType, d := range vpnDeployments(t, loadManifests(t)) {
		t.Run(vpnType, func(t *testing.T) {
			t.Parallel()
			checkVPNDeploymentProbes(t, &d.Spec.Template)
		})
	}
}

func checkVPNDeploymentProbes(t *testing.T, tmpl *corev1.PodTemplateSpec) {
	sidecar, _ := vpnPod(t, tmpl)
	if sidecar.RestartPolicy == nil || *sidecar.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Error("the sidecar is not a native sidecar (restartPolicy: Always)")
	}
	env := containerEnv(t, *sidecar, testPodIP, false, 0)
	_, parsed, err := commandFlags(sidecar.Args, env)
	if err != nil {
		t.Fatal(err)
	}
	f := parsed.(*serveflags.Flags)
	if f.Server.Monitor.Mode.String() != "probe" {
		t.Errorf("sidecar mode %s, want probe: the kubelet's probes drive the checks", f.Server.Monitor.Mode)
	}
	if f.LightProbe == "" {
		t.Error("the sidecar has no --light-probe: without one, nothing proves the tunnel alive and every check dials")
	}
	checkAddressTargets(t, sidecar.Args)
	host, portText, err := net.SplitHostPort(f.Listen)
	if err != nil || host != testPodIP {
		t.Errorf("sidecar listens on %q, want the pod IP (%s in this test)", f.Listen, testPodIP)
	}
	port, _ := strconv.Atoi(portText)

	// serve with the sidecar's flags and environment; only the address
	// (the test's), the target (no Internet here: refused, a dead tunnel)
	// and the tunnel (see noTunnel) differ.
	args := withFlags(sidecar.Args[1:], withoutTunnel(map[string]string{"check": "tcp", "target": testnet.RefusedAddr(t)}))
	s := startServe(t, env, args...)

	probes := 0
	for _, c := range tmpl.Spec.Containers {
		for _, p := range []struct {
			kind  string
			probe *corev1.Probe
		}{{"startup", c.StartupProbe}, {"liveness", c.LivenessProbe}, {"readiness", c.ReadinessProbe}} {
			if p.probe == nil {
				continue
			}
			probes++
			t.Run(c.Name+"/"+p.kind, func(t *testing.T) {
				checkProbe(t, s, f, port, p.kind, p.probe)
			})
		}
	}
	if probes < 2 {
		t.Errorf("%d probes on the VPN's containers, want a startup and a liveness probe", probes)
	}

	// Prometheus, as the pod's annotations tell it.
	ann := tmpl.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != portText {
		t.Errorf("scrape annotations %v, want scrape on port %s", ann, portText)
	}
	code, body := s.get(t, ann["prometheus.io/path"])
	if code != http.StatusOK || !strings.Contains(body, "\ntunnelprobe_mode{mode=\"probe\"} 1\n") {
		t.Errorf("GET %s: %d, want the metrics", ann["prometheus.io/path"], code)
	}
}

// checkProbe checks one kubelet probe against serve running with the
// sidecar's flags f (listening on port in the pod).
func checkProbe(t *testing.T, s *runningCommand, f *serveflags.Flags, port int, kind string, p *corev1.Probe) {
	g := p.HTTPGet
	if g == nil {
		t.Fatal("not an httpGet probe")
	}
	if g.Port.Type != intstr.Int || int(g.Port.IntVal) != port {
		t.Errorf("port %s, want %d, where the sidecar listens", g.Port.String(), port)
	}
	if g.Scheme != "" && g.Scheme != corev1.URISchemeHTTP {
		t.Errorf("scheme %s, want HTTP", g.Scheme)
	}
	if g.Host != "" {
		t.Errorf("host %q: the kubelet must probe the pod IP", g.Host)
	}
	if kind != "readiness" && p.SuccessThreshold > 1 {
		t.Errorf("successThreshold %d: must be 1 for %s probes", p.SuccessThreshold, kind)
	}
	u, err := url.Parse(g.Path)
	if err != nil {
		t.Fatal(err)
	}
	timeout := time.Duration(max(p.TimeoutSeconds, 1)) * time.Second
	if q := u.Query().Get("timeout"); q != "" {
		server, err := time.ParseDuration(q)
		if err != nil {
			t.Fatalf("?timeout=%s: %v", q, err)
		}
		// Under timeoutSeconds: a slow check is recorded as a failure and
		// answered before the kubelet gives up.
		if server >= timeout {
			t.Errorf("?timeout=%v is not under timeoutSeconds %v", server, timeout)
		}
		if server > f.Server.Monitor.MaxCheckTimeout {
			t.Errorf("?timeout=%v exceeds --max-check-timeout %v", server, f.Server.Monitor.MaxCheckTimeout)
		}
	}
	code, body := s.get(t, g.Path)
	if strings.Contains(u.Path, "/check") {
		// The target is refused: the check endpoint answers 503 fail.
		if code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "fail") {
			t.Errorf("GET %s: %d %q, want the check's answer (503 fail)", g.Path, code, body)
		}
	} else if code != http.StatusOK && code != http.StatusServiceUnavailable {
		t.Errorf("GET %s: %d %q", g.Path, code, body)
	}
}

// vpnClientVars are the variables the upstream VPN client's custom provider
// needs, by VPN_TYPE (gluetun's setup/providers/custom.md, and its settings
// in internal/configuration/settings): fixed values, and values only the
// user has. Before gluetun v3.39 the endpoint's were VPN_ENDPOINT_IP and
// VPN_ENDPOINT_PORT, which it still reads, with a warning. OpenVPN's user
// and password are for a server that asks for them; the files give them
// all the same. Its configuration file (OPENVPN_CUSTOM_CONFIG) is checked
// where it is mounted.
var vpnClientVars = map[string]struct {
	prefix string // the variables of this type alone begin so
	fixed  map[string]string
	user   []string
}{
	"wireguard": {"WIREGUARD_", map[string]string{"VPN_SERVICE_PROVIDER": "custom", "VPN_TYPE": "wireguard"},
		[]string{"WIREGUARD_PRIVATE_KEY", "WIREGUARD_ADDRESSES", "WIREGUARD_PUBLIC_KEY", "WIREGUARD_ENDPOINT_IP", "WIREGUARD_ENDPOINT_PORT"}},
	"openvpn": {"OPENVPN_", map[string]string{"VPN_SERVICE_PROVIDER": "custom", "VPN_TYPE": "openvpn", "OPENVPN_CUSTOM_CONFIG": ""},
		[]string{"OPENVPN_USER", "OPENVPN_PASSWORD"}},
}

// placeholder begins the values a user must replace in a deploy file.
const placeholder = "REPLACE-WITH-"

// checkVPNClient checks the VPN client's environment env: every variable
// its custom provider needs for its VPN_TYPE (a fixed value "" is any but
// empty), each value only the user has supplied (a placeholder, or a
// secret kept out of the file), none of the other type's, and one healer:
// its own restarts off. supplied tells whether the named variable's value
// is a placeholder or a secret.
func checkVPNClient(t *testing.T, env map[string]string, supplied func(name string) bool) {
	t.Helper()
	vpnType := env["VPN_TYPE"]
	want, ok := vpnClientVars[vpnType]
	if !ok {
		t.Fatalf("VPN_TYPE %q: want wireguard or openvpn", vpnType)
	}
	for name, v := range want.fixed {
		if got, ok := env[name]; !ok || got == "" || (v != "" && got != v) {
			t.Errorf("%s is %q, want %q: the VPN client does not start without it", name, got, cmp.Or(v, "a value"))
		}
	}
	for _, name := range want.user {
		if _, ok := env[name]; !ok {
			t.Errorf("no %s, which the VPN client's custom provider takes for %s", name, vpnType)
		} else if !supplied(name) {
			t.Errorf("%s is %q: want a %s... placeholder or a secret, the user's", name, env[name], placeholder)
		}
	}
	for name := range env {
		for other, o := range vpnClientVars {
			if other != vpnType && strings.HasPrefix(name, o.prefix) {
				t.Errorf("%s is for %s, not %s", name, other, vpnType)
			}
		}
	}
	if env["HEALTH_RESTART_VPN"] != "off" {
		t.Errorf("HEALTH_RESTART_VPN %q: the VPN client's own health loop would restart the tunnel beside the one healer; want off", env["HEALTH_RESTART_VPN"])
	}
}

// TestVPNDeploymentClient checks the VPN client's settings in each VPN
// type's Deployment (see checkVPNClient), that its firewall lets the
// kubelet's probes and the scrapes in on the sidecar's port, that
// OpenVPN's configuration is mounted where OPENVPN_CUSTOM_CONFIG points,
// and that the Deployments differ in nothing else.
func TestVPNDeploymentClient(t *testing.T) {
	t.Parallel()
	deployments := vpnDeployments(t, loadManifests(t))
	for vpnType, d := range deployments {
		t.Run(vpnType, func(t *testing.T) {
			tmpl := &d.Spec.Template
			sidecar, vpn := vpnPod(t, tmpl)
			env := containerEnv(t, *vpn, testPodIP, false, 0)
			vars := map[string]corev1.EnvVar{}
			for _, e := range vpn.Env {
				vars[e.Name] = e
			}
			checkVPNClient(t, env, func(name string) bool {
				e := vars[name]
				return strings.HasPrefix(e.Value, placeholder) || (e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil)
			})
			_, parsed, err := commandFlags(sidecar.Args, containerEnv(t, *sidecar, testPodIP, false, 0))
			if err != nil {
				t.Fatal(err)
			}
			_, port, _ := net.SplitHostPort(parsed.(*serveflags.Flags).Listen)
			ports := strings.Split(strings.ReplaceAll(env["FIREWALL_INPUT_PORTS"], " ", ""), ",")
			if !slices.Contains(ports, port) {
				t.Errorf("FIREWALL_INPUT_PORTS %q lacks the health port %s: the VPN client's firewall would drop the kubelet's probes", env["FIREWALL_INPUT_PORTS"], port)
			}
			if path, ok := env["OPENVPN_CUSTOM_CONFIG"]; ok {
				checkMountedFile(t, tmpl, vpn, path)
			}
		})
	}
	if len(deployments) != len(vpnClientVars) {
		t.Fatalf("Deployments vpn for %v: want one for each of %v", slices.Sorted(maps.Keys(deployments)), slices.Sorted(maps.Keys(vpnClientVars)))
	}
	a, b := stripVPNClient(t, deployments["wireguard"]), stripVPNClient(t, deployments["openvpn"])
	if diff := firstDiff(a, b); diff != "" {
		t.Errorf("the WireGuard and OpenVPN Deployments differ beyond the VPN client's settings: %s", diff)
	}
}

// stripVPNClient returns d as YAML without its VPN client's settings: the
// variables of its VPN type, its volume mounts and the pod's volumes.
func stripVPNClient(t *testing.T, d *appsv1.Deployment) []byte {
	t.Helper()
	d = d.DeepCopy()
	_, vpn := vpnPod(t, &d.Spec.Template)
	vpn.Env = slices.DeleteFunc(vpn.Env, func(e corev1.EnvVar) bool { return isVPNTypeVar(e.Name) })
	vpn.VolumeMounts, d.Spec.Template.Spec.Volumes = nil, nil
	b, err := yaml.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// isVPNTypeVar reports whether the VPN client's variable name belongs to
// one VPN type.
func isVPNTypeVar(name string) bool {
	for _, v := range vpnClientVars {
		if strings.HasPrefix(name, v.prefix) {
			return true
		}
	}
	return name == "VPN_TYPE"
}

// firstDiff returns the first line where a and b differ, or "".
func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: %q, %q", i+1, x, y)
		}
	}
	return ""
}

// checkMountedFile fails t unless path, in container c of the pod tmpl, is
// a file of a Secret or ConfigMap volume mounted there.
func checkMountedFile(t *testing.T, tmpl *corev1.PodTemplateSpec, c *corev1.Container, path string) {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		file, ok := vm.SubPath, vm.SubPath != "" && vm.MountPath == path
		if vm.SubPath == "" {
			file, ok = strings.CutPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/")
		}
		if !ok {
			continue
		}
		i := slices.IndexFunc(tmpl.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == vm.Name })
		if i < 0 {
			t.Fatalf("%s: the volume mount %s names no volume of the pod", path, vm.Name)
		}
		var items []corev1.KeyToPath
		switch v := tmpl.Spec.Volumes[i]; {
		case v.Secret != nil:
			items = v.Secret.Items
		case v.ConfigMap != nil:
			items = v.ConfigMap.Items
		default:
			t.Fatalf("%s: volume %s is no Secret or ConfigMap", path, v.Name)
		}
		if len(items) > 0 && !slices.ContainsFunc(items, func(k corev1.KeyToPath) bool { return k.Path == file }) {
			t.Errorf("%s: volume %s puts no key at %s", path, vm.Name, file)
		}
		return
	}
	t.Errorf("%s is in no volume mounted in container %s: the VPN client would find no configuration", path, c.Name)
}

// TestLoadJob checks that the Indexed Job loads the sink's Service and that
// each pod's result is printed where docs/deployment.md collects it.
func TestLoadJob(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	job := m.job(t, "tunnelprobe-load")
	if !m.indexed("Job " + job.Name) {
		t.Error("completionMode is not Indexed")
	}
	if job.Spec.Parallelism == nil || job.Spec.Completions == nil || *job.Spec.Parallelism != *job.Spec.Completions {
		t.Error("parallelism and completions differ: the pods would not load at the same time")
	}
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %s, want Never", job.Spec.Template.Spec.RestartPolicy)
	}

	// The sink behind the load's target.
	sinkPorts := map[string]int{} // "service:port" -> container port of the sink
	for _, svc := range m.services {
		for _, d := range m.deployments {
			if !reflect.DeepEqual(d.Spec.Selector.MatchLabels, svc.Spec.Selector) {
				continue
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				_, parsed, err := commandFlags(c.Args, nil)
				if err != nil {
					t.Fatalf("%s: %v", d.Name, err)
				}
				sf, ok := parsed.(*sinkFlags)
				if !ok {
					continue
				}
				_, lp, _ := net.SplitHostPort(sf.listen)
				listen, _ := strconv.Atoi(lp)
				for _, sp := range svc.Spec.Ports {
					target := sp.TargetPort.IntValue()
					for _, cp := range c.Ports {
						if sp.TargetPort.Type == intstr.String && cp.Name == sp.TargetPort.StrVal {
							target = int(cp.ContainerPort)
						}
					}
					if target == listen {
						sinkPorts[fmt.Sprintf("%s:%d", svc.Name, sp.Port)] = listen
					}
				}
			}
		}
	}
	if len(sinkPorts) == 0 {
		t.Fatal("no Service port reaches a sink's --listen port")
	}

	spec := job.Spec.Template.Spec
	var loadJSON, printed string
	var loadMount, printMount corev1.VolumeMount
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		env := containerEnv(t, c, testPodIP, true, 3)
		args := make([]string, len(c.Args))
		for i, a := range c.Args {
			args[i] = expandK8s(a, env)
		}
		switch {
		case isTunnelprobe(c) && len(args) > 0 && args[0] == "load":
			_, parsed, err := commandFlags(mountArgs(t, c, args, t.TempDir()), env)
			if err != nil {
				t.Fatalf("load args %q: %v", c.Args, err)
			}
			lf := parsed.(*loadFlags)
			if _, ok := sinkPorts[lf.spec.Target]; !ok {
				t.Errorf("load --target %s is no sink Service port (%v)", lf.spec.Target, sinkPorts)
			}
			i := slices.Index(args, "--json")
			if i < 0 || i+1 == len(args) {
				t.Fatal("load writes no --json result")
			}
			loadJSON = args[i+1]
			loadMount = c.VolumeMounts[0]
		case len(args) == 2 && args[0] == "cat":
			printed = args[1]
			printMount = c.VolumeMounts[0]
		}
	}
	if loadJSON != "/results/result-3.json" {
		t.Errorf("pod 3 writes %q, want a name with its index", loadJSON)
	}
	if printed != loadJSON || loadMount.Name != printMount.Name || loadMount.MountPath != printMount.MountPath {
		t.Errorf("the result container prints %q from volume %s, the load writes %q to volume %s",
			printed, printMount.Name, loadJSON, loadMount.Name)
	}
}

// checkComposeHeal checks that the health service's heal reaches gluetun's
// control server as the vpn service configures it: the address it listens
// on, the two requests that stop and run the tunnel, and the API key of its
// role, read as gluetun reads it (unknown fields refused).
func checkComposeHeal(t *testing.T, vpn, health composeService, f *serveflags.Flags) {
	t.Helper()
	sc, err := f.ServerConfig(flag.NewFlagSet("serve", flag.ContinueOnError), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range sc.HealRequests {
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		if u.Host != vpn.Environment["HTTP_CONTROL_SERVER_ADDRESS"] {
			t.Errorf("the heal goes to %s, gluetun's control server listens on %q", u.Host, vpn.Environment["HTTP_CONTROL_SERVER_ADDRESS"])
		}
		got = append(got, r.Method+" "+u.Path+" "+r.Body)
	}
	want := []string{`PUT /v1/vpn/status {"status":"stopped"}`, `PUT /v1/vpn/status {"status":"running"}`}
	if !slices.Equal(got, want) {
		t.Errorf("heal requests %q, want %q", got, want)
	}
	var role struct {
		Name, Auth, APIKey, Username, Password string
	}
	dec := json.NewDecoder(strings.NewReader(vpn.Environment["HTTP_CONTROL_SERVER_AUTH_DEFAULT_ROLE"]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&role); err != nil || role.Auth != "apikey" || role.APIKey == "" {
		t.Fatalf("HTTP_CONTROL_SERVER_AUTH_DEFAULT_ROLE %+v (%v): want an apikey role", role, err)
	}
	for _, r := range sc.HealRequests {
		if key := r.Header.Get("X-API-Key"); key != role.APIKey {
			t.Errorf("the heal sends X-API-Key %q, the role asks for %q", key, role.APIKey)
		}
	}
	if vpn.Environment["HEALTH_RESTART_VPN"] != "off" {
		t.Error("gluetun's own health loop restarts the VPN beside the health service's heal: set HEALTH_RESTART_VPN off")
	}
}

// composeFile is the part of the Compose specification the example uses;
// decoding it strictly catches a misspelt key.
type composeFile struct {
	Services map[string]composeService `json:"services"`
}

type composeService struct {
	Image       string              `json:"image"`
	Command     []string            `json:"command"`
	Environment map[string]string   `json:"environment"`
	NetworkMode string              `json:"network_mode"`
	DependsOn   any                 `json:"depends_on"`
	Ports       []string            `json:"ports"`
	Volumes     []string            `json:"volumes"`
	CapAdd      []string            `json:"cap_add"`
	Devices     []string            `json:"devices"`
	Restart     string              `json:"restart"`
	Healthcheck *composeHealthcheck `json:"healthcheck"`
}

// composeHealthcheck has no start_interval, so that the strict decoding
// refuses a file with one: Compose before 2.20 and Engine before 25 refuse
// the whole file for it (a new user's docker-compose 1.29 did), and its
// default, 5 s, is the files' interval anyway.
type composeHealthcheck struct {
	Test        []string `json:"test"`
	Interval    string   `json:"interval"`
	Timeout     string   `json:"timeout"`
	Retries     int      `json:"retries"`
	StartPeriod string   `json:"start_period"`
}

// composeFiles returns the names of deploy/compose's files: compose.yaml
// and its OpenVPN twin.
func composeFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(deployDir, "compose", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Compose files: %v", err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}

// loadCompose decodes the Compose file name of deploy/compose and returns
// its text too.
func loadCompose(t *testing.T, name string) (composeFile, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "compose", name))
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.UnmarshalStrict(b, &cf); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cf, string(b)
}

func TestComposeFile(t *testing.T) {
	t.Parallel()
	for _, name := range composeFiles(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cf, _ := loadCompose(t, name)
			checkComposeFile(t, cf)
		})
	}
}

// Compose itself accepts both files: docker-compose config, Debian's 1.29
// (Compose v1, the oldest a user is likely to have), with the variables the
// files require set as a user's .env would. A key that Compose added later
// (start_interval, from 2.20) made it refuse the whole file.
func TestComposeAcceptsTheFiles(t *testing.T) {
	compose, err := exec.LookPath("docker-compose")
	if err != nil {
		if os.Getenv("TUNNELPROBE_REQUIRE_DOCKER") == "1" {
			t.Fatal("no docker-compose, and TUNNELPROBE_REQUIRE_DOCKER=1 (.ci/run installs it)")
		}
		t.Skip("no docker-compose")
	}
	for _, name := range composeFiles(t) {
		cmd := exec.CommandContext(t.Context(), compose, "--file", filepath.Join(deployDir, "compose", name), "config", "--quiet")
		cmd.Env = append(os.Environ(), "WIREGUARD_PRIVATE_KEY=key", "GLUETUN_API_KEY=key", "OPENVPN_USER=", "OPENVPN_PASSWORD=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("docker-compose config refuses %s: %v\n%s", name, err, out)
		}
	}
}

// checkComposeFile checks a Compose file's health service and its
// healthcheck against the real flags, and runs them.
func checkComposeFile(t *testing.T, cf composeFile) {
	health, ok := cf.Services["health"]
	if !ok || !strings.Contains(health.Image, "/tunnelprobe/tunnelprobe:") {
		t.Fatal("no tunnelprobe service named health")
	}
	for name, svc := range cf.Services {
		if name != "vpn" && svc.NetworkMode != "service:vpn" {
			t.Errorf("service %s does not share the VPN's network namespace", name)
		}
	}

	fs, parsed, err := commandFlags(health.Command, health.Environment)
	if err != nil {
		t.Fatalf("command %q: %v", health.Command, err)
	}
	f := parsed.(*serveflags.Flags)
	checkAddressTargets(t, health.Command)
	for name := range health.Environment {
		if strings.HasPrefix(name, cliflag.EnvPrefix) && !setsFlag(fs, name) {
			t.Errorf("%s sets no flag of serve", name)
		}
	}

	hc := health.Healthcheck
	if hc == nil || len(hc.Test) < 3 || hc.Test[0] != "CMD" || hc.Test[1] != "/tunnelprobe" {
		t.Fatalf("healthcheck %+v: want [CMD /tunnelprobe probe ...]", hc)
	}
	probeArgs := hc.Test[2:]
	probeFS, parsedProbe, err := commandFlags(probeArgs, nil)
	if err != nil {
		t.Fatalf("healthcheck %q: %v", probeArgs, err)
	}
	pf := parsedProbe.(*probeflags.Flags)
	if pf.Docker || pf.Count != 1 || pf.Kubelet.FailureThreshold != 1 {
		t.Errorf("the healthcheck must make one probe that fails on one failure; Docker counts the retries")
	}
	if pf.Kubelet.Type != prober.Readiness {
		t.Errorf("the healthcheck probes --type %s: a healthcheck restarts nothing, as a readiness probe, whose log never says it would", pf.Kubelet.Type)
	}

	// The trap: the healthcheck runs in the health container and reads its
	// TUNNELPROBE_* variables, meant for serve. They must not change it.
	fsEnv, _, err := commandFlags(probeArgs, health.Environment)
	if err != nil {
		t.Fatalf("healthcheck with the container's environment: %v", err)
	}
	fsEnv.VisitAll(func(fl *flag.Flag) {
		if without := probeFS.Lookup(fl.Name).Value.String(); fl.Value.String() != without {
			t.Errorf("the container's environment changes the healthcheck's --%s: %s, not %s (pass it as a flag)",
				fl.Name, fl.Value, without)
		}
	})

	// Docker's timeout lets the probe end by itself; the probe's URL is
	// where serve listens, in the shared namespace.
	dockerTimeout, err := time.ParseDuration(hc.Timeout)
	if err != nil || dockerTimeout <= pf.Kubelet.Timeout {
		t.Errorf("healthcheck timeout %q is not over the probe's --timeout %v", hc.Timeout, pf.Kubelet.Timeout)
	}
	if hc.Retries < 1 {
		t.Errorf("retries %d", hc.Retries)
	}
	u, err := url.Parse(pf.Kubelet.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, servePort, _ := net.SplitHostPort(f.Listen)
	if u.Hostname() != "127.0.0.1" || u.Port() != servePort {
		t.Errorf("the healthcheck probes %s, serve listens on %s", u.Host, f.Listen)
	}
	if q := u.Query().Get("timeout"); q != "" {
		if d, err := time.ParseDuration(q); err != nil || d >= pf.Kubelet.Timeout {
			t.Errorf("?timeout=%s is not under the probe's --timeout %v", q, pf.Kubelet.Timeout)
		}
	}

	checkComposeHeal(t, cf.Services["vpn"], health, f)

	// Semantics: exit 0 while the tunnel works, 1 once it does not; the
	// check's target and the light probe's stand for the tunnel.
	// Its output, which Docker keeps as the health log, says what the
	// healthcheck found and never that anything would restart.
	for _, tc := range []struct {
		name    string
		target  string
		code    int
		verdict string
	}{
		{"working", listeningTarget(t), 0, "verdict: ready after 1 probe(s)"},
		{"dead", testnet.RefusedAddr(t), 1, "verdict: not ready at the end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServe(t, health.Environment, withFlags(health.Command[1:], withoutTunnel(map[string]string{"check": "tcp", "target": tc.target}))...)
			// The healthcheck reads what the loop last found: before its
			// first check that is unknown, a 503 (Docker's start_period
			// covers it), so the working case waits for the loop's pass.
			if tc.code == 0 {
				s.waitHealthy(t)
			}
			su, _ := url.Parse(s.url)
			pu := *u
			pu.Host = su.Host
			args := withFlags(probeArgs[1:], map[string]string{"url": pu.String()})
			var stdout, stderr bytes.Buffer
			code := probeCommand(context.Background(), args, envMap(health.Environment), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("healthcheck exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, tc.code, &stdout, &stderr)
			}
			if out := stdout.String(); !strings.Contains(out, tc.verdict+"\n") || strings.Contains(out, "restart") {
				t.Errorf("the healthcheck's log:\n%s\nwant %q and no restart: nothing restarts on it", out, tc.verdict)
			}
		})
	}
}

// composeRequired is a value a Compose file takes from .env, failing when
// it is not set there: ${NAME:?message} or ${NAME?message}.
var composeRequired = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*:?\?[^}]+\}$`)

// composeRef is a variable a Compose file takes from .env.
var composeRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

// TestComposeVPNClient checks the VPN client's settings in each Compose
// file (see checkVPNClient; the health service's heal is the one healer),
// that the recipe for .env at the top gives every variable the file takes
// from it, that OpenVPN's configuration is mounted where
// OPENVPN_CUSTOM_CONFIG points, and that the files differ in nothing else.
func TestComposeVPNClient(t *testing.T) {
	t.Parallel()
	byType := map[string][]byte{}
	for _, name := range composeFiles(t) {
		cf, text := loadCompose(t, name)
		env := cf.Services["vpn"].Environment
		t.Run(name, func(t *testing.T) {
			checkVPNClient(t, env, func(name string) bool {
				return strings.HasPrefix(env[name], placeholder) || composeRequired.MatchString(env[name])
			})
			recipe := regexp.MustCompile(`(?m)^#.*> \.env$`).FindString(text)
			for _, m := range composeRef.FindAllStringSubmatch(text, -1) {
				if !strings.Contains(recipe, m[1]+"=") {
					t.Errorf("the file takes %s from .env, but the recipe for .env (%q) does not set it", m[1], recipe)
				}
			}
			if path, ok := env["OPENVPN_CUSTOM_CONFIG"]; ok && !slices.ContainsFunc(cf.Services["vpn"].Volumes, func(v string) bool {
				parts := strings.Split(v, ":")
				return len(parts) >= 2 && parts[1] == path
			}) {
				t.Errorf("OPENVPN_CUSTOM_CONFIG %s is mounted from nowhere (volumes %q): the VPN client would find no configuration", path, cf.Services["vpn"].Volumes)
			}
		})
		// The file without the VPN client's settings.
		vpn := cf.Services["vpn"]
		vpn.Environment = maps.Clone(env)
		maps.DeleteFunc(vpn.Environment, func(name, _ string) bool { return isVPNTypeVar(name) })
		vpn.Volumes = nil
		cf.Services["vpn"] = vpn
		b, err := json.MarshalIndent(cf, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		byType[env["VPN_TYPE"]] = b
	}
	if len(byType) != len(vpnClientVars) {
		t.Fatalf("Compose files for %v: want one for each of %v", slices.Sorted(maps.Keys(byType)), slices.Sorted(maps.Keys(vpnClientVars)))
	}
	if diff := firstDiff(byType["wireguard"], byType["openvpn"]); diff != "" {
		t.Errorf("the WireGuard and OpenVPN Compose files differ beyond the VPN client's settings: %s", diff)
	}
}

// listeningTarget returns the address of a listener that accepts TCP
// connections (the kernel completes the handshake; nothing reads).
func listeningTarget(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// placeholderImage is the image the deploy files name: none is published.
const placeholderImage = "ghcr.io/tunnelprobe/tunnelprobe:latest"

// TestPlaceholderImageIsMarked: wherever a deploy file names the image,
// the line before says it is not published and where to read how to build
// it, so that a user who applies the file knows why the pull fails.
func TestPlaceholderImageIsMarked(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(deployDir, "*", "*.yaml"))
	if err != nil || len(files) < 7 {
		t.Fatalf("deploy files %v, %v", files, err)
	}
	named := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			if !strings.Contains(line, "image: "+placeholderImage) {
				continue
			}
			named++
			if i < 2 || !strings.Contains(lines[i-2], "Not published") || !strings.Contains(lines[i-1], "deploy/README.md#the-image") {
				t.Errorf("%s:%d names the placeholder image without saying it is not published", file, i+1)
			}
		}
	}
	if named < 6 {
		t.Errorf("the placeholder image is named %d times, want in each of the 6 files that run it", named)
	}
	readme, err := os.ReadFile(filepath.Join(deployDir, "README.md"))
	if err != nil || !strings.Contains(string(readme), "no such image is published") || !strings.Contains(string(readme), "docker push") {
		t.Errorf("deploy/README.md does not say the image is a placeholder and how to push one (%v)", err)
	}
}

// TestMatrixJob checks that the Indexed Job runs one shard of the matrix a
// pod, every pod a different one, and prints its matrix.json where the
// merge in its header collects it.
func TestMatrixJob(t *testing.T) {
	t.Parallel()
	m := loadManifests(t)
	job := m.job(t, "tunnelprobe-matrix")
	if !m.indexed("Job "+job.Name) || job.Spec.Completions == nil || job.Spec.Parallelism == nil || *job.Spec.Parallelism != *job.Spec.Completions {
		t.Fatal("not an Indexed Job running every shard at once")
	}
	n := int(*job.Spec.Completions)
	spec := job.Spec.Template.Spec
	if len(spec.InitContainers) != 1 || len(spec.Containers) != 1 {
		t.Fatalf("%d init containers, %d containers: want the scenario, then the result", len(spec.InitContainers), len(spec.Containers))
	}
	shards := map[string]bool{}
	for i := range n {
		env := containerEnv(t, spec.InitContainers[0], testPodIP, true, i)
		args := make([]string, len(spec.InitContainers[0].Args))
		for k, a := range spec.InitContainers[0].Args {
			args[k] = expandK8s(a, env)
		}
		out := ""
		for k := range args[:len(args)-1] {
			switch args[k] {
			case "--shard":
				shards[args[k+1]] = true
			case "--out":
				out = args[k+1]
			}
		}
		if i == 0 {
			if _, _, err := commandFlags(mountArgs(t, spec.InitContainers[0], args, t.TempDir()), env); err != nil {
				t.Errorf("args %q: %v", args, err)
			}
		}
		result := spec.Containers[0]
		if renv := containerEnv(t, result, testPodIP, true, i); len(result.Args) != 2 || result.Args[0] != "cat" ||
			expandK8s(result.Args[1], renv) != out+"/matrix.json" {
			t.Errorf("pod %d: the result container prints %q, want %s/matrix.json", i, result.Args, out)
		}
	}
	if len(shards) != n || !shards[fmt.Sprintf("%d/%d", n-1, n)] {
		t.Errorf("shards %v for %d pods: want 0/%d to %d/%d, one a pod", shards, n, n, n-1, n)
	}
}
