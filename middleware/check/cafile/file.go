package cafile

import (
	"crypto/x509"
	"fmt"
	"os"
)

// File is a file of PEM CA certificates as text, its name: a flag or
// config value that is read, and must parse, when it is set. The pool
// holds only those CAs, not the system roots: a check against a private
// server should not also trust every public CA. The zero value is no file.
type File struct {
	Name string
	PEM  []byte         // the file's content
	Pool *x509.CertPool // its certificates
}

// MarshalText returns the file's name.
func (f File) MarshalText() ([]byte, error) { return []byte(f.Name), nil }

// UnmarshalText reads the file text names. On an error f is unchanged.
func (f *File) UnmarshalText(text []byte) error {
	name := string(text)
	data, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("load CA certificates: %w", err)
	}
	read, err := parse(name, data)
	if err != nil {
		return err
	}
	*f = read
	return nil
}

// parse returns the CA certificates data holds, read from the file name.
func parse(name string, data []byte) (File, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return File{}, fmt.Errorf("load CA certificates from %s: no PEM certificate found", name)
	}
	return File{Name: name, PEM: data, Pool: pool}, nil
}
