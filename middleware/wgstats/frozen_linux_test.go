package wgstats_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/wgstats"
)

// A userspace device whose UAPI socket accepts and never answers, as a
// frozen wireguard-go does: reads fail at their timeout, no more than one
// hangs however often the device is asked, and Close returns at once.
func TestFrozenUAPISocket(t *testing.T) {
	const dir = "/var/run/wireguard" // where wgctrl looks for userspace devices
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Skipf("no %s here: %v", dir, err)
	}
	name := fmt.Sprintf("tpfrozen%d", os.Getpid()%100000)
	ln, err := net.Listen("unix", filepath.Join(dir, name+".sock"))
	if err != nil {
		t.Skipf("no UAPI socket here: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	accepted := make(chan struct{}, 16)
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
			accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		ln.Close() // removes the socket file
		<-served
		mu.Lock()
		for _, c := range conns {
			c.Close() // lets the hung read end, for goleak
		}
		mu.Unlock()
	})

	d := &wgstats.Device{Name: name, Timeout: 100 * time.Millisecond}
	for i := range 3 {
		if _, err := d.ReadCounters(); !errors.Is(err, wgstats.ErrNoAnswer) {
			t.Fatalf("read %d of a frozen device: %v, want ErrNoAnswer", i+1, err)
		}
	}
	<-accepted
	select {
	case <-accepted:
		t.Error("a second read started while the first hung")
	default:
	}
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked on the frozen device")
	}
}
