package pki_test

import (
	"crypto/tls"
	"sync"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/pki"
)

func TestIssuedCertificateVerifiesAgainstItsCAOnly(t *testing.T) {
	ca, err := pki.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue("tls.lab", "10.99.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	})
	defer wg.Wait()
	defer ln.Close()

	for _, name := range []string{"tls.lab", "10.99.0.1"} {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.Pool, ServerName: name})
		if err != nil {
			t.Errorf("%s, verified by the CA: %v", name, err)
			continue
		}
		c.Close()
	}
	if c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{ServerName: "tls.lab"}); err == nil {
		c.Close()
		t.Error("the certificate verified against the system's roots")
	}
}
