package prober

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// GRPCSince is the first version with the grpc probe, 1.23 (behind the
// GRPCContainerProbe feature gate until 1.24 turned it on, GA in 1.27).
const GRPCSince KubeletVersion = 23

// GRPC performs one grpc probe as the kubelet of [DefaultKubeletVersion]
// does; see [KubeletVersion.GRPC].
func GRPC(ctx context.Context, address, service string, timeout time.Duration, dialer check.Dialer) Result {
	return DefaultKubeletVersion.GRPC(ctx, address, service, timeout, dialer)
}

// GRPC performs one grpc probe of address ("host:port") as the kubelet of
// version v does (pkg/probe/grpc): it connects without TLS (the kubelet
// has no credentials for it) with User-Agent kube-probe/1.<minor>, waiting
// for the connection through refusals and retries as a blocking dial
// does, then calls grpc.health.v1.Health/Check for service ("" asks for
// the server's overall health). The timeout covers both. SERVING passes;
// anything else fails, never errs: another status (NOT_SERVING, UNKNOWN),
// an error status (NOT_FOUND for a service the server does not know,
// UNIMPLEMENTED from a server without the health service), a connection
// that never became ready, the timeout. The connection is closed before it
// returns; on the host network its socket lingers 1 s on close from 1.27
// on, as the kubelet's probe dialer sets. dialer opens the connection;
// nil means the host network. Ending ctx also ends the probe.
func (v KubeletVersion) GRPC(ctx context.Context, address, service string, timeout time.Duration, dialer check.Dialer) Result {
	return timed(func() Result { return grpcProbe(ctx, v, address, service, timeout, dialer) })
}

func grpcProbe(ctx context.Context, v KubeletVersion, address, service string, timeout time.Duration, dialer check.Dialer) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if dialer == nil {
		dialer = v.dialer()
	}
	// passthrough: the address goes to the dialer as it is, no resolver in
	// between, as the kubelet's grpc.DialContext did.
	conn, err := grpc.NewClient("passthrough:///"+address,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent(v.UserAgent()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", addr)
		}))
	if err != nil {
		return Result{Outcome: Failure, Err: fmt.Errorf("error: failed to connect service at %q: %w", address, err)}
	}
	defer conn.Close()
	// The kubelet's dial blocks until the connection is ready, through
	// refused connections and their retries, or the timeout.
	conn.Connect()
	for s := conn.GetState(); s != connectivity.Ready; s = conn.GetState() {
		if !conn.WaitForStateChange(ctx, s) {
			return Result{Outcome: Failure, Err: fmt.Errorf("timeout: failed to connect service %q within %v: %w", address, timeout, ctx.Err())}
		}
	}
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	switch code := status.Code(err); {
	case err == nil:
	case code == codes.Unimplemented:
		return Result{Outcome: Failure, Err: fmt.Errorf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %w", err)}
	case code == codes.DeadlineExceeded:
		return Result{Outcome: Failure, Err: fmt.Errorf("timeout: health rpc did not complete within %v: %w", timeout, err)}
	default:
		return Result{Outcome: Failure, Err: fmt.Errorf("error: health rpc probe failed: %w", err)}
	}
	if st := resp.GetStatus(); st != healthpb.HealthCheckResponse_SERVING {
		return Result{Outcome: Failure, Err: fmt.Errorf("service unhealthy (responded with %q)", st), Body: st.String()}
	}
	return Result{Outcome: Success, Body: healthpb.HealthCheckResponse_SERVING.String()}
}

// errGRPCTooOld is a grpc probe asked of a kubelet that had none.
var errGRPCTooOld = errors.New("grpc: the kubelet's grpc probe came in 1.23 (behind a feature gate until 1.24)")
