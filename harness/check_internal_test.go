package harness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/testcert"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFollowingCANeedsTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ca.pem")
	// No dial happens: the address would refuse it anyway.
	c := followingCA(check.TLS{Address: "127.0.0.1:1"}, file)
	if err := c.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "load CA certificates") {
		t.Errorf("Check with no CA file = %v, want the file's error", err)
	}
}

// The check verifies real handshakes with the CA the file holds at each
// check: it fails a server of another CA and passes it once the file
// rotates to that CA.
func TestFollowingCAInAHandshake(t *testing.T) {
	first, second := testcert.Must(t, "127.0.0.1"), testcert.Must(t, "127.0.0.1")
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = second.ServerConfig()
	srv.StartTLS()
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "ca.pem")
	c := followingCA(check.TLS{Address: srv.Listener.Addr().String()}, file)

	writeFile(t, file, first.CAPEM)
	if err := c.Check(context.Background()); err == nil {
		t.Error("a server of the second CA passed with the first CA in the file")
	}
	writeFile(t, file, second.CAPEM)
	if err := c.Check(context.Background()); err != nil {
		t.Errorf("after the file rotated to the server's CA: %v", err)
	}
}
