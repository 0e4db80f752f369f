//go:build !linux

package loadgen

import "syscall"

// bindNoPort does nothing: IP_BIND_ADDRESS_NO_PORT is Linux's. Elsewhere
// each source address reserves its port at bind().
func bindNoPort(_, _ string, _ syscall.RawConn) error { return nil }
