package scenarios

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/scenarios/prober"
)

// The kubelet probe handlers of a spec.
const (
	handlerHTTPGet   = "httpGet"
	handlerTCPSocket = "tcpSocket"
	handlerExec      = "exec"
	handlerGRPC      = "grpc"
)

func (p ProberSpec) validate() error {
	switch p.Kind {
	case "kubelet", "docker":
	default:
		return fmt.Errorf("kind: %q is neither kubelet nor docker", p.Kind)
	}
	switch p.Handler {
	case "", handlerHTTPGet:
	case handlerTCPSocket, handlerExec, handlerGRPC:
		if p.Kind != "kubelet" {
			return fmt.Errorf("handler: %s is a kubelet handler; Docker probes the endpoint", p.Handler)
		}
	default:
		return fmt.Errorf("handler: %q is not httpGet, tcpSocket, exec or grpc", p.Handler)
	}
	if (p.Handler == handlerExec) != (len(p.Exec) > 0) {
		return errors.New("exec: give a command with handler exec, and only then")
	}
	if p.Service != "" && p.Handler != handlerGRPC {
		return errors.New("service: only for handler grpc")
	}
	if p.Autoheal && p.Kind != "docker" {
		return errors.New("autoheal: only for kind docker (the kubelet restarts by itself)")
	}
	if p.KubeletVersion != 0 && p.Kind != "kubelet" {
		return errors.New("kubelet_version: only for kind kubelet")
	}
	if err := p.KubeletVersion.Check(); err != nil {
		return fmt.Errorf("kubelet_version: %w", err)
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

// kubeletHandler sets the handler fields of cfg to p's, for a health
// server at hostPort.
func (p ProberSpec) kubeletHandler(cfg *prober.KubeletConfig, hostPort string) {
	switch p.Handler {
	case handlerTCPSocket:
		cfg.TCPSocket = hostPort
	case handlerGRPC:
		cfg.GRPC, cfg.GRPCService = hostPort, p.Service
	case handlerExec:
		for _, a := range p.Exec {
			cfg.Exec = append(cfg.Exec, strings.ReplaceAll(a, "{health}", hostPort))
		}
	default:
		cfg.URL = "http://" + hostPort + p.Endpoint
	}
}

// describe names what p probes, for the report.
func (p ProberSpec) describe() string {
	switch p.Handler {
	case handlerTCPSocket:
		return p.Kind + " tcpSocket"
	case handlerGRPC:
		return p.Kind + " grpc " + strconv.Quote(p.Service)
	case handlerExec:
		return p.Kind + " exec " + strings.Join(p.Exec, " ")
	}
	return p.Kind + " " + p.Endpoint
}
