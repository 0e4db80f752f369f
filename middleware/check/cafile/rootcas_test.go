package cafile_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/testcert"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/check/cafile"
)

func TestWithRootCAsNeedsTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ca.pem")
	// No dial happens: the address would refuse it anyway.
	c := cafile.WithRootCAs(check.TLS{Address: "127.0.0.1:1"}, &cafile.Following{Name: file})
	if err := c.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "load CA certificates") {
		t.Errorf("Check with no CA file = %v, want the file's error", err)
	}
	if name := fmt.Sprint(c); name != "tls 127.0.0.1:1" {
		t.Errorf("named %q, want the tls check's name", name)
	}
}

// A tls and an https check verify real handshakes with the CA the file
// holds at each check: they fail a server of another CA and pass it once
// the file rotates to that CA, starting from what File read at start.
func TestWithRootCAsFollowsTheFile(t *testing.T) {
	first, second := testcert.Must(t, "127.0.0.1"), testcert.Must(t, "127.0.0.1")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = second.ServerConfig()
	srv.StartTLS()
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "ca.pem")
	writeFile(t, file, first.CAPEM)
	var f cafile.File
	if err := f.UnmarshalText([]byte(file)); err != nil {
		t.Fatal(err)
	}
	ca := f.Follow()
	for _, c := range []check.Checker{
		cafile.WithRootCAs(check.TLS{Address: srv.Listener.Addr().String()}, ca),
		cafile.WithRootCAs(check.HTTP{URL: srv.URL}, ca),
	} {
		writeFile(t, file, first.CAPEM)
		if err := c.Check(context.Background()); err == nil {
			t.Errorf("%T: a server of the second CA passed with the first CA in the file", c)
		}
		writeFile(t, file, second.CAPEM)
		if err := c.Check(context.Background()); err != nil {
			t.Errorf("after the file rotated to the server's CA: %v", err)
		}
	}
}

// Checks may run at once (a /check/ beside the loop): each verifies with
// its own copy, which the race detector watches here.
func TestWithRootCAsConcurrently(t *testing.T) {
	b := testcert.Must(t, "127.0.0.1")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.TLS = b.ServerConfig()
	srv.StartTLS()
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "ca.pem")
	writeFile(t, file, b.CAPEM)
	c := cafile.WithRootCAs(check.TLS{Address: srv.Listener.Addr().String()}, &cafile.Following{Name: file})
	errs := make(chan error, 8)
	for range 8 {
		go func() { errs <- c.Check(context.Background()) }()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
