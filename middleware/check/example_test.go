package check_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

func ExampleTLS() {
	// A stand-in for the real target, such as cloudflare.com:443.
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the check hangs up after the handshake
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())

	c := check.TLS{
		Address: srv.Listener.Addr().String(),
		RootCAs: roots, // nil in production: the system roots
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Check(ctx); err != nil {
		fmt.Println("fail:", err)
		return
	}
	fmt.Println("pass")
	// Output: pass
}

func ExampleAnyOf() {
	down := check.Func(func(context.Context) error { return errors.New("tcp primary.test:443: dial: connection refused") })
	up := check.Func(func(context.Context) error { return nil })
	ctx := context.Background()

	fmt.Println(check.AnyOf(down, up).Check(ctx))
	fmt.Println(check.AnyOf(down, down).Check(ctx))
	fmt.Println(check.AnyOf().Check(ctx))
	// Output:
	// <nil>
	// tcp primary.test:443: dial: connection refused
	// tcp primary.test:443: dial: connection refused
	// no checks configured
}

func ExampleFunc() {
	// Any function can be a check, e.g. one that asks the VPN client for
	// its own view of the tunnel.
	connected := func() bool { return false }
	vpnUp := check.Func(func(context.Context) error {
		if !connected() {
			return errors.New("vpn: not connected")
		}
		return nil
	})
	fmt.Println(vpnUp.Check(context.Background()))
	// Output: vpn: not connected
}
