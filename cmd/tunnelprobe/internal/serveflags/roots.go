package serveflags

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"log/slog"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// Where the roots of the tls and https checks come from (Roots.From),
// besides "--tls-ca FILE".
const (
	RootsSystem   = "system"
	RootsEmbedded = "embedded Mozilla bundle"
	RootsInsecure = "none: --tls-insecure accepts any certificate"
)

// Roots are the CA certificates the tls and https checks verify servers
// with.
type Roots struct {
	// From says where they come from: RootsSystem, RootsEmbedded (the
	// binary's fallback when the system has none), "--tls-ca FILE", or
	// RootsInsecure.
	From string
	// Subjects are the certificates' subjects, as pkix.Name.String
	// writes them ("CN=ISRG Root X1,O=Internet Security Research
	// Group,C=US"); none with --tls-insecure.
	Subjects []string
}

// Roots returns the CA certificates the flags' tls and https checks trust:
// --tls-ca's (as read at start) instead of any other; else the system's
// (x509.SystemCertPool), which the binary falls back on the embedded
// Mozilla bundle for when the system has none
// (golang.org/x/crypto/x509roots/fallback).
func (f *Flags) Roots() (Roots, error) {
	switch {
	case f.tlsInsecure:
		return Roots{From: RootsInsecure}, nil
	case f.tlsCA.Name != "":
		subjects, err := subjectNames(f.tlsCA.Pool)
		return Roots{From: "--tls-ca " + f.tlsCA.Name, Subjects: subjects}, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		return Roots{}, fmt.Errorf("system CA certificates: %w", err)
	}
	from := RootsSystem
	if embedded, err := bundlePool(); err == nil && pool.Equal(embedded) {
		from = RootsEmbedded
	}
	subjects, err := subjectNames(pool)
	return Roots{From: from, Subjects: subjects}, err
}

// LogRoots logs where the tls and https checks' roots come from and how
// many they are, then each one's subject at debug level; with none, a
// warning, since every tls and https check would then fail.
func (f *Flags) LogRoots(l *slog.Logger) {
	roots, err := f.Roots()
	if err != nil {
		l.Warn("tls roots: cannot list them", "err", err)
		return
	}
	if roots.From != RootsInsecure && len(roots.Subjects) == 0 {
		l.Warn("tls roots: none; tls and https checks cannot verify any certificate (give --tls-ca)", "from", roots.From)
		return
	}
	l.Info("tls roots", "from", roots.From, "certificates", len(roots.Subjects))
	for _, s := range roots.Subjects {
		l.Debug("tls root", "subject", s)
	}
}

// bundlePool returns a pool of the embedded Mozilla bundle, as the
// fallback package builds the one it sets.
func bundlePool() (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	for root := range bundle.Roots() {
		cert, err := x509.ParseCertificate(root.Certificate)
		if err != nil {
			return nil, err
		}
		pool.AddCertWithConstraint(cert, root.Constraint)
	}
	return pool, nil
}

// subjectNames returns the subjects of pool's certificates as text.
func subjectNames(pool *x509.CertPool) ([]string, error) {
	//lint:ignore SA1019 Subjects is deprecated because a pool that stands for the platform's verifier (macOS, Windows) lists none of its roots; on Linux, where the image runs, the system pool holds the certificates it read.
	raw := pool.Subjects()
	names := make([]string, 0, len(raw))
	for _, der := range raw {
		var rdn pkix.RDNSequence
		if _, err := asn1.Unmarshal(der, &rdn); err != nil {
			return nil, fmt.Errorf("a CA certificate's subject: %w", err)
		}
		var name pkix.Name
		name.FillFromRDNSequence(&rdn)
		names = append(names, name.String())
	}
	return names, nil
}
