package middleware_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

func TestCAFileTLSCheckFollowsTheFile(t *testing.T) {
	first, second := newTestCert(t, "127.0.0.1"), newTestCert(t, "127.0.0.1")
	addrFirst, addrSecond := serveTLS(t, first.ServerConfig()), serveTLS(t, second.ServerConfig())
	file := filepath.Join(t.TempDir(), "ca.pem")
	write := func(b []byte) {
		t.Helper()
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	check := func(addr string) error {
		c := &middleware.CAFileTLSCheck{TLS: middleware.TLSCheck{Address: addr}, CAFile: file}
		return c.Check(context.Background())
	}
	shared := &middleware.CAFileTLSCheck{TLS: middleware.TLSCheck{Address: addrSecond}, CAFile: file}

	if err := check(addrFirst); err == nil {
		t.Error("passed with no CA file")
	}
	write(first.CAPEM)
	if err := check(addrFirst); err != nil {
		t.Errorf("the first CA: %v", err)
	}
	if err := shared.Check(context.Background()); err == nil {
		t.Error("the second server verified by the first CA")
	}
	// The CA rotates: the same check follows the file.
	write(second.CAPEM)
	if err := shared.Check(context.Background()); err != nil {
		t.Errorf("after the CA changed: %v", err)
	}
	// Half written, then gone: the last good CA stays in use.
	write(second.CAPEM[:20])
	if err := shared.Check(context.Background()); err != nil {
		t.Errorf("with a half-written file: %v", err)
	}
	os.Remove(file)
	if err := shared.Check(context.Background()); err != nil {
		t.Errorf("with the file gone: %v", err)
	}
}
