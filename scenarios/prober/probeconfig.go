package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// What the Kubelet and Docker probers' constructors share.

// fillDefault gives a prober setting its default when it is zero; a
// negative setting is an error naming the field, added to errs.
func fillDefault[T time.Duration | int](errs *[]error, name string, v *T, def T) {
	switch {
	case *v < 0:
		*errs = append(*errs, fmt.Errorf("%s must not be negative, got %v", name, *v))
	case *v == 0:
		*v = def
	}
}

// finishProbeConfig returns errs as one error; without errors it gives
// clock its default.
func finishProbeConfig(errs []error, clock *clockwork.Clock) error {
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("prober: %w", err)
	}
	if *clock == nil {
		*clock = clockwork.NewRealClock()
	}
	return nil
}

// CheckURL returns an error naming the field unless s is an http or
// https URL with a host.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url must be an http or https URL, got %q", s)
	}
	return nil
}

// httpProbe is a prober's probe: one httpGet of probeURL as the kubelet
// of version v.
func httpProbe(v KubeletVersion, probeURL string, timeout time.Duration, dialer check.Dialer) func(context.Context) Result {
	return func(ctx context.Context) Result {
		return v.HTTPGet(ctx, probeURL, timeout, dialer)
	}
}

// kubeletProbe returns the probe of cfg's one handler: httpGet, tcpSocket,
// exec or grpc; an error says which fields are wrong.
func kubeletProbe(cfg KubeletConfig) (func(context.Context) Result, error) {
	given := 0
	for _, set := range []bool{cfg.URL != "", cfg.TCPSocket != "", len(cfg.Exec) > 0, cfg.GRPC != ""} {
		if set {
			given++
		}
	}
	if given != 1 {
		return nil, fmt.Errorf("give exactly one handler: url (httpGet), tcpSocket, exec or grpc; got %d", given)
	}
	if cfg.GRPCService != "" && cfg.GRPC == "" {
		return nil, errors.New("grpcService names the service of a grpc probe: give grpc too")
	}
	switch {
	case cfg.GRPC != "":
		if _, _, err := net.SplitHostPort(cfg.GRPC); err != nil {
			return nil, fmt.Errorf("grpc must be host:port, got %q", cfg.GRPC)
		}
		if cfg.Version.orDefault() < GRPCSince {
			return nil, fmt.Errorf("%w, not in %v", errGRPCTooOld, cfg.Version)
		}
		return func(ctx context.Context) Result {
			return cfg.Version.GRPC(ctx, cfg.GRPC, cfg.GRPCService, cfg.Timeout, cfg.Dialer)
		}, nil
	case cfg.TCPSocket != "":
		if _, _, err := net.SplitHostPort(cfg.TCPSocket); err != nil {
			return nil, fmt.Errorf("tcpSocket must be host:port, got %q", cfg.TCPSocket)
		}
		return func(ctx context.Context) Result {
			return cfg.Version.TCPSocket(ctx, cfg.TCPSocket, cfg.Timeout, cfg.Dialer)
		}, nil
	case len(cfg.Exec) > 0:
		if cfg.Exec[0] == "" {
			return nil, errors.New("exec: the command is empty")
		}
		command := slices.Clone(cfg.Exec)
		return func(ctx context.Context) Result { return Exec(ctx, command, cfg.Timeout) }, nil
	}
	if err := CheckURL(cfg.URL); err != nil {
		return nil, err
	}
	return httpProbe(cfg.Version, cfg.URL, cfg.Timeout, cfg.Dialer), nil
}
