package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/internal/syncbuf"
)

// roleIn runs the built binary with args in network namespace ns until
// the test ends (SIGTERM, as a container's stop), which it must survive
// with exit 0; the returned writer holds its output.
func roleIn(t *testing.T, ns string, args ...string) *lineWriter {
	t.Helper()
	out := newLineWriter()
	var errb syncbuf.Buffer
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, builtBinary(t)}, args...)...)
	cmd.Stdout, cmd.Stderr = out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
	})
	return out
}

// tlsIn makes a TLS handshake with the lab's TLS target from namespace ns,
// trusting caFile alone.
func tlsIn(ctx context.Context, ns, caFile string) error {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	var c net.Conn
	var dialErr error
	if err := netnstest.Do(ns, func() {
		var d net.Dialer
		c, dialErr = d.DialContext(ctx, "tcp", net.JoinHostPort(harness.ServerTunnelAddr.String(), "443"))
	}); err != nil {
		return err
	}
	if dialErr != nil {
		return dialErr
	}
	defer c.Close()
	return tls.Client(c, &tls.Config{RootCAs: pool, ServerName: harness.TLSHost}).HandshakeContext(ctx)
}

// tunIndexIn is the index of ns's tun0, 0 while there is none.
func tunIndexIn(t *testing.T, ns string) int {
	idx := 0
	netnstest.Run(t, ns, func() {
		if ifi, err := net.InterfaceByName(harness.OpenVPNDevice); err == nil {
			idx = ifi.Index
		}
	})
	return idx
}

// The OpenVPN roles run apart, each in a namespace of its own as in a
// container: the server writes the lab's files, the client connects with
// its client.ovpn, the TLS target answers through tun0 with the files'
// CA, and the client's control API (its key required) restarts openvpn
// onto a new tun0 that carries the check again.
func TestLabOpenVPNRolesApart(t *testing.T) {
	if err := harness.OpenVPNAvailable(""); err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	f := newFarSide(t)
	dir := filepath.Join(t.TempDir(), "ovpn")
	srv := roleIn(t, f.far, "lab", "server", "--openvpn", dir, "--listen", "10.77.0.2:1194", "--remote", "10.77.0.2")
	srv.waitWithin(t, `sink (\S+)`, time.Minute)
	cl := roleIn(t, f.near, "lab", "client", "--openvpn", dir, "--control", "127.0.0.1:0", "--control-key", "k")
	ctrl := cl.waitWithin(t, `control http://(\S+)`, time.Minute)
	cl.waitWithin(t, `tun tun0 ifindex (\d+)`, time.Minute)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := tlsIn(ctx, f.near, filepath.Join(dir, "ca.crt")); err != nil {
		t.Fatalf("TLS through tun0: %v", err)
	}
	before := tunIndexIn(t, f.near)

	hc := http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		if nerr := netnstest.Do(f.near, func() { c, err = (&net.Dialer{}).DialContext(ctx, network, addr) }); nerr != nil {
			return nil, nerr
		}
		return c, err
	}}}
	for key, want := range map[string]int{"": http.StatusUnauthorized, "k": http.StatusOK} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+ctrl+"/restart", nil)
		req.Header.Set("X-API-Key", key)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("POST /restart with key %q: %s, want %d", key, resp.Status, want)
		}
	}
	hc.CloseIdleConnections()
	var err error
	for {
		if now := tunIndexIn(t, f.near); now != 0 && now != before {
			if err = tlsIn(ctx, f.near, filepath.Join(dir, "ca.crt")); err == nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no new tun0 carrying the TLS check after the restart (was interface %d): %v", before, err)
		case <-time.After(200 * time.Millisecond): // polling the kernel's device, not synchronising
		}
	}
}
