package serveflags_test

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/cmd/tunnelprobe/internal/serveflags"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/internal/testcert"
)

// --tls-ca replaces every other root, and --tls-insecure trusts none; the
// system's and the embedded bundle are told apart in the built image
// (scenarios' TestRootImageTrustsEmbeddedRoots), where the system has none.
func TestRootsOfTheFlags(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, testcert.Must(t).CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args     []string
		from     string
		subjects []string
	}{
		{[]string{"--tls-ca", ca}, "--tls-ca " + ca, []string{"CN=tunnelprobe lab CA"}},
		{[]string{"--tls-insecure"}, serveflags.RootsInsecure, nil},
	} {
		var f serveflags.Flags
		fs := flag.NewFlagSet("tunnelprobe serve", flag.ContinueOnError)
		f.Register(fs)
		if err := cliflag.Parse(fs, tc.args, func(string) string { return "" }, serveflags.Exclusive...); err != nil {
			t.Fatal(err)
		}
		roots, err := f.Roots()
		if err != nil {
			t.Fatal(err)
		}
		if roots.From != tc.from || !slices.Equal(roots.Subjects, tc.subjects) {
			t.Errorf("%q: roots from %q, subjects %q; want %q, %q", tc.args, roots.From, roots.Subjects, tc.from, tc.subjects)
		}
	}
}
