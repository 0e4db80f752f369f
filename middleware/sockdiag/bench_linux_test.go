package sockdiag_test

import (
	"fmt"
	"net"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/middleware/sockdiag"
)

// BenchmarkReadDelivery reads the delivery of 10,000 TCP sockets on the
// tunnel's interface (5,000 connections, both ends in one namespace),
// beside ss -ti listing the same sockets in the same run: the cost of one
// sample, and (%core) the share of a core at one sample a second.
//
//	go test -run x -bench ReadDelivery -benchtime 50x ./middleware/sockdiag/
func BenchmarkReadDelivery(b *testing.B) {
	const conns = 5000
	ns := netnstest.New(b, "sdbench")
	netnstest.IP(b, "-n", ns, "link", "add", "vtun", "type", "veth", "peer", "name", "vtunpeer")
	netnstest.IP(b, "-n", ns, "link", "set", "vtunpeer", "up")
	netnstest.IP(b, "-n", ns, "addr", "add", "10.79.0.1/24", "dev", "vtun")
	netnstest.IP(b, "-n", ns, "link", "set", "vtun", "up")
	var ln net.Listener
	var err error
	netnstest.Run(b, ns, func() { ln, err = net.Listen("tcp", "10.79.0.1:9000") })
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var all []net.Conn
	var accepting sync.WaitGroup
	accepting.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			all = append(all, c)
			mu.Unlock()
		}
	})
	b.Cleanup(func() {
		ln.Close()
		accepting.Wait()
		for _, c := range all {
			c.Close()
		}
	})
	netnstest.Run(b, ns, func() {
		for range conns {
			c, derr := net.Dial("tcp", "10.79.0.1:9000")
			if derr != nil {
				err = derr
				return
			}
			mu.Lock()
			all = append(all, c)
			mu.Unlock()
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	perCore := func(b *testing.B, elapsed time.Duration) {
		b.ReportMetric(100*elapsed.Seconds()/float64(b.N), "%core@1/s")
	}
	b.Run("sockdiag", func(b *testing.B) {
		var n int
		var rerr error
		start := time.Now()
		netnstest.Run(b, ns, func() {
			for b.Loop() {
				d, err := sockdiag.Delivery{Interface: "vtun"}.ReadDelivery()
				n, rerr = len(d), err
			}
		})
		perCore(b, time.Since(start))
		if rerr != nil || n < 2*conns {
			b.Fatalf("read %d sockets, %v; want %d", n, rerr, 2*conns)
		}
	})
	b.Run("ss -ti", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			out, err := exec.Command("ip", "netns", "exec", ns, "ss", "-tin", "src", "10.79.0.1").Output()
			if err != nil || len(out) == 0 {
				b.Fatal(fmt.Errorf("ss: %v", err))
			}
		}
		perCore(b, time.Since(start))
	})
}
