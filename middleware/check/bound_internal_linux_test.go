package check

import (
	"errors"
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A bind the kernel refuses for want of CAP_NET_RAW (any bind before Linux
// 5.7, a second one since) says so, and never looks like an ICMP socket
// outside ping_group_range, whose remedy differs.
func TestBindNotPermittedIsNotICMPNotPermitted(t *testing.T) {
	if unix.Geteuid() != 0 {
		t.Skip("needs root, to drop CAP_NET_RAW from one thread")
	}
	errc := make(chan error, 1)
	go func() {
		// Capabilities are per thread: this one drops CAP_NET_RAW and,
		// still locked when the goroutine ends, dies with it.
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		data[0].Effective &^= 1 << unix.CAP_NET_RAW
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(s)
		if err := bindToDevice(s, "lo"); err != nil {
			errc <- err
			return
		}
		errc <- bindToDevice(s, "lo") // binding a bound socket again needs CAP_NET_RAW
	}()
	err := <-errc
	if !errors.Is(err, ErrBindNotPermitted) || errors.Is(err, syscall.EPERM) || errors.Is(err, ErrICMPNotPermitted) {
		t.Fatalf("got %v, want ErrBindNotPermitted, not EPERM", err)
	}
}
