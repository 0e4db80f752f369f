package sockdiag_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/sockdiag"
)

// hangGuard bounds every wait; it only fires when a test is broken.
const hangGuard = 10 * time.Second

// pair is a near namespace joined to a far one twice: by vtun
// (10.79.0.1 to .2), the tunnel, and by vpod (10.78.0.1 to .2), the pod's
// own interface. Far accepts TCP on port 9000 of both and reads what it
// gets, counting it, and on port 9001 writes what it is told to.
type pair struct {
	near, far string
	received  chan int    // bytes far read, per read
	send      chan []byte // what far's writer writes to every connection on 9001
}

func newPair(t *testing.T) *pair {
	t.Helper()
	p := &pair{near: netnstest.New(t, "sdnear"), far: netnstest.New(t, "sdfar"), received: make(chan int, 1024), send: make(chan []byte)}
	netnstest.Veth(t, p.near, p.far, "vtun", "vtunfar", "10.79.0.1/24", "10.79.0.2/24")
	netnstest.Veth(t, p.near, p.far, "vpod", "vpodfar", "10.78.0.1/24", "10.78.0.2/24")
	var sinkLn, sourceLn net.Listener
	var err, err2 error
	netnstest.Run(t, p.far, func() {
		sinkLn, err = net.Listen("tcp", ":9000")
		sourceLn, err2 = net.Listen("tcp", ":9001")
	})
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	var mu sync.Mutex
	var conns []net.Conn
	keep := func(c net.Conn) { mu.Lock(); conns = append(conns, c); mu.Unlock() }
	wg.Go(func() {
		for {
			c, err := sinkLn.Accept()
			if err != nil {
				return
			}
			keep(c)
			wg.Go(func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						p.received <- n
					}
					if err != nil {
						return
					}
				}
			})
		}
	})
	wg.Go(func() {
		for {
			c, err := sourceLn.Accept()
			if err != nil {
				return
			}
			keep(c)
			wg.Go(func() {
				for {
					select {
					case b := <-p.send:
						if _, err := c.Write(b); err != nil {
							return
						}
					case <-done:
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		close(done)
		sinkLn.Close()
		sourceLn.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return p
}

// dial connects, in the near namespace, from local to remote.
func (p *pair) dial(t *testing.T, local, remote string) net.Conn {
	t.Helper()
	var c net.Conn
	var err error
	netnstest.Run(t, p.near, func() {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err = d.Dial("tcp", remote)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// read reads the delivery of vtun in the near namespace.
func (p *pair) read(t *testing.T) middleware.Delivery {
	t.Helper()
	var d middleware.Delivery
	var err error
	netnstest.Run(t, p.near, func() { d, err = sockdiag.Delivery{Interface: "vtun"}.ReadDelivery() })
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// waitReceived waits until far has read n bytes.
func (p *pair) waitReceived(t *testing.T, n int) {
	t.Helper()
	for got := 0; got < n; {
		select {
		case k := <-p.received:
			got += k
		case <-time.After(hangGuard):
			t.Fatalf("far read %d of %d bytes", got, n)
		}
	}
}

// The sockets on the tunnel's interface are read, each by its cookie:
// one that sends sees its value grow once the far end acknowledged the
// data; one that only receives does not; those on loopback and on the
// pod's own interface are not read at all.
func TestDeliveryOfTheTunnelsSockets(t *testing.T) {
	p := newPair(t)
	up := p.dial(t, "10.79.0.1", "10.79.0.2:9000")
	down := p.dial(t, "10.79.0.1", "10.79.0.2:9001")
	pod := p.dial(t, "10.78.0.1", "10.78.0.2:9000")
	var lo net.Listener
	var err error
	netnstest.Run(t, p.near, func() { lo, err = net.Listen("tcp", "127.0.0.1:0") })
	if err != nil {
		t.Fatal(err)
	}
	defer lo.Close()
	loop := p.dial(t, "127.0.0.1", lo.Addr().String())
	_ = loop

	before := p.read(t)
	if len(before) != 2 {
		t.Fatalf("read %d sockets, want the 2 on vtun: %v", len(before), before)
	}
	// Data that far receives: up's value grows once its acknowledgement
	// came back (read until it did; the kernel updates it as the ACK
	// arrives).
	const n = 1 << 20
	if _, err := up.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	p.waitReceived(t, n)
	// What the pod's own interface sends is no proof of the tunnel.
	if _, err := pod.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	p.waitReceived(t, n)
	deadline := time.Now().Add(hangGuard)
	var grew int
	var after middleware.Delivery
	for grew == 0 && time.Now().Before(deadline) {
		after = p.read(t)
		grew = 0
		for k, v := range after {
			if v > before[k] {
				grew++
			}
		}
	}
	if grew != 1 {
		t.Fatalf("%d sockets grew, want up's alone: before %v, after %v", grew, before, after)
	}
	// Data that near only receives moves nothing.
	p.send <- make([]byte, n)
	if _, err := io.ReadFull(down, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	again := p.read(t)
	for k, v := range again {
		if v != after[k] {
			t.Errorf("a socket grew by receiving alone: %v, then %v", after, again)
		}
	}
}
