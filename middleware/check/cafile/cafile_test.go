package cafile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/testcert"
	"github.com/tunnelprobe/tunnelprobe/middleware/check/cafile"
)

func writeFile(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFileUnmarshalText(t *testing.T) {
	bundle := testcert.Must(t, "127.0.0.1")
	dir := t.TempDir()
	good, bad, missing := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "bad.pem"), filepath.Join(dir, "missing.pem")
	writeFile(t, good, bundle.CAPEM)
	writeFile(t, bad, []byte("not a certificate\n"))

	var f cafile.File
	if err := f.UnmarshalText([]byte(good)); err != nil || f.Name != good || string(f.PEM) != string(bundle.CAPEM) || !f.Pool.Equal(bundle.Pool) {
		t.Errorf("UnmarshalText(%q) = %+v, %v", good, f, err)
	}
	if err := f.UnmarshalText([]byte(bad)); err == nil || !strings.Contains(err.Error(), bad) || f.Name != good {
		t.Errorf("UnmarshalText(%q) = %v, and the value is %q: want an error naming the file, the value unchanged", bad, err, f.Name)
	}
	if err := f.UnmarshalText([]byte(missing)); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("UnmarshalText(%q) = %v, want a not-exist error naming the file", missing, err)
	}
	if text, _ := f.MarshalText(); string(text) != good {
		t.Errorf("MarshalText = %q, want %q", text, good)
	}
}

func TestFollowingFollowsTheFile(t *testing.T) {
	first, second := testcert.Must(t, "127.0.0.1"), testcert.Must(t, "127.0.0.1")
	file := filepath.Join(t.TempDir(), "ca.pem")
	ca := &cafile.Following{Name: file}
	expect := func(when string, want *testcert.Bundle) {
		t.Helper()
		pool, err := ca.Pool()
		if err != nil || !pool.Equal(want.Pool) {
			t.Errorf("%s: %v, %v; want the CA written last that parsed", when, pool, err)
		}
	}

	if _, err := ca.Pool(); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("no file yet: %v, want an error naming the file", err)
	}
	writeFile(t, file, first.CAPEM[:20])
	if _, err := ca.Pool(); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("half written before any CA: %v, want an error naming the file", err)
	}
	writeFile(t, file, first.CAPEM)
	expect("the first CA", first)
	// The CA rotates: the same value follows the file.
	writeFile(t, file, second.CAPEM)
	expect("after the CA changed", second)
	// Half written, then gone: the last good CA stays in use.
	writeFile(t, file, second.CAPEM[:20])
	expect("with a half-written file", second)
	os.Remove(file)
	expect("with the file gone", second)
}
