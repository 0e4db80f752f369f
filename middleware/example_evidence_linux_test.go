package middleware_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// A TLS check that proof of life decides: the monitor's own light probe,
// answered, passes /check/ at once with no dial, however loaded the tunnel;
// a Window of probes unanswered fails it. In a VPN's namespace the probe
// target is an address beyond the tunnel (1.1.1.1) and the dialer
// check.BoundDialer("wg0"), the counters middleware.InterfaceCounters("wg0");
// here a dialer that carries every dial to a local server stands in for the
// tunnel (a probe of the loopback address itself is refused: this host's
// own kernel answers it whatever a tunnel does), and the loopback
// interface's counters for its counters.
func Example_proofOfLife() {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	addr := srv.Listener.Addr().String()

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	tunnel := check.DialerFunc(func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	})
	probe, _, err := middleware.ChooseLightProbe(ctx, "tcp://192.0.2.1:443", tunnel) // in a VPN: "1.1.1.1", check.BoundDialer("wg0")
	if err != nil {
		panic(err)
	}
	answered := make(chan struct{})
	var once sync.Once
	m, err := middleware.New(check.TLS{Address: addr, RootCAs: roots}, middleware.Config{
		Mode:     middleware.ModeProbe,
		Evidence: &middleware.Evidence{Probes: []middleware.LightProbe{probe}, Source: middleware.InterfaceCounters("lo")},
		Observer: middleware.ObserverFuncs{OnLightProbe: func(r middleware.LightProbeResult) {
			if r.Err == nil {
				once.Do(func() { close(answered) })
			}
		}},
	})
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }() // sends the probes, reads the counters
	<-answered

	r := m.Probe(ctx) // what /check/ runs
	fmt.Println(r.Passed(), r.DecidedBy())
	stop()
	fmt.Println(<-done)
	// Output:
	// true light-probe
	// <nil>
}
