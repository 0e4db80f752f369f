// Package testnet holds the tests' network helpers.
package testnet

import (
	"net"
	"testing"
)

// RefusedAddr returns a loopback address that was free a moment ago:
// nothing listens on it, so a dial there is refused at once.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
