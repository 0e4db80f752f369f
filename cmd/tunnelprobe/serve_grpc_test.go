package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/tunnelprobe/tunnelprobe/internal/syncbuf"
	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
)

// startServeGRPC runs serve with args and returns once it prints both of
// its addresses: the health listener's and --grpc-listen's. The test's
// cleanup stops it and checks its exit code.
func startServeGRPC(t *testing.T, args ...string) (httpAddr, grpcAddr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncbuf.Buffer
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := serveCommand(ctx, args, envMap(nil), pw, &stderr)
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d; stderr:\n%s", code, &stderr)
		}
	})
	r := bufio.NewReader(pr)
	for _, prefix := range []string{"tunnelprobe serve: listening on ", "tunnelprobe serve: gRPC health on "} {
		line, err := r.ReadString('\n')
		addr, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if err != nil || !ok {
			t.Fatalf("serve printed %q (%v), want %q...; stderr:\n%s", line, err, prefix, &stderr)
		}
		if grpcAddr = addr; httpAddr == "" {
			httpAddr, grpcAddr = addr, ""
		}
	}
	go io.Copy(io.Discard, r) // the copy ends when serve returns
	return httpAddr, grpcAddr
}

func grpcCheck(t *testing.T, addr string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("Check of %s: %v", addr, err)
	}
	return resp.GetStatus()
}

// serve --grpc-listen answers gRPC's health Check by running the check:
// SERVING while the target listens, NOT_SERVING once it is gone; and
// probe --grpc passes and fails on it with exit 0 and 1.
func TestServeGRPCAndProbeGRPC(t *testing.T) {
	t.Parallel()
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	_, grpcAddr := startServeGRPC(t, "--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0",
		"--mode", "probe", "--check", "tcp", "--target", target.Addr().String(), "--timeout", "1s")

	if st := grpcCheck(t, grpcAddr); st != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("Check with the target up: %v, want SERVING", st)
	}
	code, stdout, stderr := runProbeCmd(context.Background(), nil, "--grpc", grpcAddr, "--timeout", "2s", "--count", "1", "--failure-threshold", "1")
	if code != 0 || !strings.Contains(stdout, "probe success") {
		t.Errorf("probe --grpc with the target up: exit %d, want 0\n%s%s", code, stdout, stderr)
	}

	target.Close()
	if st := grpcCheck(t, grpcAddr); st != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("Check with the target gone: %v, want NOT_SERVING", st)
	}
	code, stdout, stderr = runProbeCmd(context.Background(), nil, "--grpc", grpcAddr, "--timeout", "2s", "--count", "1", "--failure-threshold", "1")
	if code != 1 || !strings.Contains(stdout, `responded with "NOT_SERVING"`) || !strings.Contains(stdout, "would restart") {
		t.Errorf("probe --grpc with the target gone: exit %d, want 1 and a restart\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runProbeCmd(context.Background(), nil, "--grpc", grpcAddr, "--grpc-service", "tunnel", "--count", "1", "--failure-threshold", "1")
	if code != 1 || !strings.Contains(stdout, "NotFound") {
		t.Errorf("probe --grpc-service of a name serve does not know: exit %d, want 1 naming NOT_FOUND\n%s", code, stdout)
	}
}

// --grpc-listen at --listen's address serves gRPC and HTTP on one port.
func TestServeGRPCOnTheHealthPort(t *testing.T) {
	t.Parallel()
	addr := testnet.RefusedAddr(t)
	s := startServe(t, nil, "--listen", addr, "--grpc-listen", addr, "--mode", "probe", "--check", "tcp", "--target", testnet.RefusedAddr(t))
	if st := grpcCheck(t, addr); st != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("Check of a refused target: %v, want NOT_SERVING", st)
	}
	if code, body := s.get(t, "/"); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "unhealthy") {
		t.Errorf("GET / on the same port: %d %q, want the state the gRPC Check recorded", code, body)
	}
}

// Issue 29 item 7: a gRPC Check in flight when serve stops (SIGTERM ends
// its context) is answered UNAVAILABLE, not cut before its status (code
// Unknown, "malformed header: missing HTTP content-type"), on the port
// that serves gRPC and HTTP both.
func TestServeAnswersGRPCCheckInFlightAtShutdown(t *testing.T) {
	t.Parallel()
	target, accepted := stallingTarget(t)
	addr := testnet.RefusedAddr(t)
	s := startServe(t, nil, "--listen", addr, "--grpc-listen", addr, "--mode", "probe", "--check", "tls", "--target", target, "--tls-insecure")
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	checked := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		checked <- err
	}()
	<-accepted // the check is in flight: its TLS handshake is never answered
	if code := s.stop(t); code != 0 {
		t.Errorf("serve exited %d at shutdown, want 0; stderr:\n%s", code, s.stderr)
	}
	if err := <-checked; status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("the Check in flight at shutdown: %v, want UNAVAILABLE, shutting down", err)
	}
}

func TestServeGRPCUsage(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if code := serveCommand(context.Background(), []string{"--grpc-listen", "nowhere"}, envMap(nil), &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "--grpc-listen") {
		t.Errorf("--grpc-listen nowhere: exit %d, want 2 naming the flag: %s", code, &stderr)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	stderr.Reset()
	if code := serveCommand(context.Background(), []string{"--listen", "127.0.0.1:0", "--grpc-listen", taken.Addr().String()}, envMap(nil), &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "cannot listen on "+taken.Addr().String()+" (--grpc-listen)") {
		t.Errorf("--grpc-listen on a taken port: exit %d, want 1 naming the flag: %s", code, &stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--grpc", "127.0.0.1"}, "--grpc"},
		{[]string{"--grpc", "127.0.0.1:1", "--url", "http://127.0.0.1:1/"}, "give one of --url, --tcp-socket, --grpc and --exec"},
		{[]string{"--tcp-socket", "127.0.0.1:1", "--grpc-service", "tunnel"}, "--grpc-service"},
		{[]string{"--docker", "--grpc", "127.0.0.1:1"}, "--docker probes a --url"},
		{[]string{"--grpc", "127.0.0.1:1", "--kubelet-version", "1.22"}, "invalid value 1.22 for flag --kubelet-version"},
	} {
		code, _, stderr := runProbeCmd(context.Background(), nil, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("probe %q: exit %d, want 2 naming %q: %s", tc.args, code, tc.want, stderr)
		}
	}
}
