package prober

import (
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// socketLinger reads SO_LINGER back from this process's socket bound to
// local ("ip:port"): the probe's end of a connection that is still open.
// It looks through this process's descriptors, since the probe keeps its
// socket to itself.
func socketLinger(local string) (unix.Linger, error) {
	want, err := netip.ParseAddrPort(local)
	if err != nil {
		return unix.Linger{}, err
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return unix.Linger{}, err
	}
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		sa, err := unix.Getsockname(fd)
		if err != nil || sockaddr(sa) != want {
			continue // not a socket, or another one
		}
		l, err := unix.GetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER)
		if err != nil {
			return unix.Linger{}, err
		}
		return *l, nil
	}
	return unix.Linger{}, fmt.Errorf("no socket of this process is bound to %s", local)
}

func sockaddr(sa unix.Sockaddr) netip.AddrPort {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(sa.Port))
	}
	return netip.AddrPort{}
}

// The probe's socket lingers 1 s on close from 1.27 on, as the kubelet's
// ProbeDialer sets it, and not before. The handler reads the option back
// from the probe's socket while the probe waits for the answer.
func TestHTTPGetLinger(t *testing.T) {
	t.Parallel()
	type linger struct {
		l   unix.Linger
		err error
	}
	got := make(chan linger, 1)
	srv, _ := probeServer(t, func(w http.ResponseWriter, r *http.Request) {
		l, err := socketLinger(r.RemoteAddr)
		got <- linger{l, err}
	})
	for v, want := range map[KubeletVersion]unix.Linger{
		0:  {Onoff: 1, Linger: 1},
		37: {Onoff: 1, Linger: 1},
		27: {Onoff: 1, Linger: 1},
		26: {},
	} {
		if res := v.HTTPGet(t.Context(), srv.URL, 5*time.Second, nil); res.Outcome != Success {
			t.Fatalf("version %d: result %+v", v, res)
		}
		g := <-got
		if g.err != nil || g.l != want {
			t.Errorf("version %d: SO_LINGER %+v, %v; want %+v", v, g.l, g.err, want)
		}
	}
}
