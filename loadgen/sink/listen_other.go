//go:build !unix

package sink

import (
	"context"
	"errors"
	"net"
)

// ListenReusePort is not supported on this platform.
func ListenReusePort(ctx context.Context, network, addr string) (net.Listener, error) {
	return nil, errors.New("sink: SO_REUSEPORT is not supported on this platform")
}
