package netns

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
)

// NS is a network namespace made by New. Its methods are safe for
// concurrent use; Close ends it once nothing else is in it.
type NS struct{ h vnetns.NsHandle }

// New creates a network namespace with its loopback device up.
func New() (*NS, error) {
	var ns *NS
	err := onThread(func() error {
		orig, err := vnetns.Get()
		if err != nil {
			return err
		}
		defer orig.Close()
		h, err := vnetns.New() // moves this thread into it
		if err != nil {
			return fmt.Errorf("netns: new network namespace (needs root): %w", err)
		}
		if err := vnetns.Set(orig); err != nil {
			h.Close()
			return errLeftThread{err}
		}
		ns = &NS{h: h}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := ns.Do(loUp); err != nil {
		ns.Close()
		return nil, err
	}
	return ns, nil
}

func loUp() error {
	lo, err := netlink.LinkByName("lo")
	if err == nil {
		err = netlink.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("netns: loopback up: %w", err)
	}
	return nil
}

// Do runs f on a thread in the namespace and returns its error. Sockets,
// devices and processes f creates (exec.Cmd.Start forks from that
// thread) stay in the namespace; what f does is bound to it only while f
// runs.
func (n *NS) Do(f func() error) error {
	return onThread(func() error {
		orig, err := vnetns.Get()
		if err != nil {
			return err
		}
		defer orig.Close()
		if err := vnetns.Set(n.h); err != nil {
			return fmt.Errorf("netns: enter: %w", err)
		}
		ferr := f()
		if err := vnetns.Set(orig); err != nil {
			return errLeftThread{err}
		}
		return ferr
	})
}

// Close releases the handle: the namespace ends with the last process in
// it, and with it every device in it.
func (n *NS) Close() error { return n.h.Close() }

// errLeftThread says that a thread could not return to the namespace it
// came from: onThread then lets the thread end with its goroutine.
type errLeftThread struct{ err error }

func (e errLeftThread) Error() string {
	return "netns: return to the original namespace: " + e.err.Error()
}

// onThread runs f on a goroutine locked to its thread and waits for it.
// A thread f could not bring back to its own namespace stays locked, so
// that the runtime ends it rather than give it to another goroutine.
func onThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := f()
		var left errLeftThread
		if !errors.As(err, &left) {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// FD is the namespace's file descriptor, for netlink's NsFd (moving a
// device, such as a veth pair's peer, into it).
func (n *NS) FD() int { return int(n.h) }
