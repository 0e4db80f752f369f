package wgstats_test

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"
	"golang.zx2c4.com/wireguard/ipc"
	"golang.zx2c4.com/wireguard/tun"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/wgstats"
)

// nsBind opens its sockets in network namespace ns, whichever goroutine
// asks: wireguard-go opens them again when its TUN device goes down and up,
// from the goroutine that reads the device's events, on any thread.
type nsBind struct {
	conn.Bind
	ns string
}

func (b nsBind) Open(port uint16) (fns []conn.ReceiveFunc, actual uint16, err error) {
	if nsErr := netnstest.Do(b.ns, func() { fns, actual, err = b.Bind.Open(port) }); nsErr != nil {
		return nil, 0, nsErr
	}
	return fns, actual, err
}

// startWireGuard runs wireguard-go on a kernel TUN device name in ns, with
// address addr, listening on port and with one peer, and serves its UAPI
// socket, which wgctrl reads. It is closed when the test ends.
func startWireGuard(t *testing.T, ns, name, addr string, port int, key wgtypes.Key, peer wgtypes.Key, endpoint string) {
	t.Helper()
	var dev *device.Device
	var uapi net.Listener
	var err error
	netnstest.Run(t, ns, func() {
		var td tun.Device
		if td, err = tun.CreateTUN(name, 1420); err != nil {
			return
		}
		dev = device.NewDevice(td, nsBind{conn.NewDefaultBind(), ns}, device.NewLogger(device.LogLevelSilent, ""))
		cfg := fmt.Sprintf("private_key=%s\nlisten_port=%d\npublic_key=%s\nallowed_ip=10.232.0.0/24\nendpoint=%s\n",
			hex.EncodeToString(key[:]), port, hex.EncodeToString(peer[:]), endpoint)
		if err = dev.IpcSet(cfg); err != nil {
			return
		}
		err = dev.Up() // opens the bind's sockets, here in ns
	})
	if err != nil {
		if dev != nil {
			dev.Close()
		}
		netnstest.Unavailable(t, "wireguard-go on a TUN device: %v", err)
	}
	file, err := ipc.UAPIOpen(name)
	if err == nil {
		uapi, err = ipc.UAPIListen(name, file)
	}
	if err != nil {
		dev.Close()
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			c, err := uapi.Accept()
			if err != nil {
				return
			}
			go dev.IpcHandle(c)
		}
	}()
	t.Cleanup(func() {
		uapi.Close()
		<-served
		dev.Close()
	})
	netnstest.IP(t, "-n", ns, "addr", "add", addr, "dev", name)
	netnstest.IP(t, "-n", ns, "link", "set", name, "up")
}

// TestKernelDevices checks both kernel sources on real devices: a veth pair
// between two namespaces the test creates, and a wg0 of wireguard-go on a
// kernel TUN device in each, read through /proc and through wgctrl.
func TestKernelDevices(t *testing.T) {
	a, b := netnstest.New(t, "a"), netnstest.New(t, "b")
	netnstest.IP(t, "link", "add", "tpveth-a", "netns", a, "type", "veth", "peer", "name", "tpveth-b", "netns", b)
	netnstest.IP(t, "-n", a, "addr", "add", "10.231.0.1/30", "dev", "tpveth-a")
	netnstest.IP(t, "-n", b, "addr", "add", "10.231.0.2/30", "dev", "tpveth-b")
	netnstest.IP(t, "-n", a, "link", "set", "tpveth-a", "up")
	netnstest.IP(t, "-n", b, "link", "set", "tpveth-b", "up")

	keyA, _ := wgtypes.GeneratePrivateKey()
	keyB, _ := wgtypes.GeneratePrivateKey()
	wgA, wgB := fmt.Sprintf("tpwg%da", os.Getpid()%10000), fmt.Sprintf("tpwg%db", os.Getpid()%10000)
	startWireGuard(t, a, wgA, "10.232.0.1/24", 51820, keyA, keyB.PublicKey(), "10.231.0.2:51820")
	startWireGuard(t, b, wgB, "10.232.0.2/24", 51820, keyB, keyA.PublicKey(), "10.231.0.1:51820")

	read := func(ns, iface string) (c middleware.Counters) {
		netnstest.Run(t, ns, func() {
			var err error
			if c, err = middleware.InterfaceCounters(iface).ReadCounters(); err != nil {
				t.Error(err)
			}
		})
		return c
	}
	vethBefore, wgBefore := read(a, "tpveth-a"), read(a, wgA)

	// 50 UDP datagrams from a to b through the tunnel, answered by b.
	var got int
	netnstest.Run(t, b, func() {
		pc, err := net.ListenPacket("udp4", "10.232.0.2:9999")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer pc.Close()
			buf := make([]byte, 1500)
			for {
				_ = pc.SetReadDeadline(time.Now().Add(10 * time.Second))
				n, from, err := pc.ReadFrom(buf)
				if err != nil || n == 1 {
					return
				}
				_, _ = pc.WriteTo(buf[:n], from)
			}
		}()
	})
	netnstest.Run(t, a, func() {
		c, err := net.Dial("udp4", "10.232.0.2:9999")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		buf := make([]byte, 100)
		// The first datagram waits for the handshake, which may need a
		// second try (5 s later) and lose it: send until one comes back.
		for try := 1; ; try++ {
			_ = c.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := c.Write(buf); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Read(buf); err == nil {
				break
			} else if try == 15 {
				t.Fatalf("no echo through the tunnel in %d tries: %v", try, err)
			}
		}
		for range 50 {
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Write(buf); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Read(buf); err != nil {
				t.Fatalf("after %d echoes: %v", got, err)
			}
			got++
		}
		_, _ = c.Write([]byte{0}) // ends the echo server
	})

	vethAfter, wgAfter := read(a, "tpveth-a"), read(a, wgA)
	if d := wgAfter.TxPackets - wgBefore.TxPackets; d < 50 || wgAfter.RxPackets-wgBefore.RxPackets < 50 {
		t.Errorf("%s: sent %d and received %d packets, want at least 50 each way", wgA, d, wgAfter.RxPackets-wgBefore.RxPackets)
	}
	if vethAfter.TxBytes-vethBefore.TxBytes < 50*(100+28+32) {
		t.Errorf("tpveth-a sent %d bytes, want at least the 50 encrypted datagrams", vethAfter.TxBytes-vethBefore.TxBytes)
	}
	if _, err := middleware.InterfaceCounters(wgA).ReadCounters(); err == nil {
		t.Errorf("%s is visible outside its namespace", wgA)
	}

	// wgctrl, through wireguard-go's UAPI socket.
	d := &wgstats.Device{Name: wgA}
	defer d.Close()
	peers, err := d.Peers()
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 1 || peers[0].PublicKey != keyB.PublicKey().String() || peers[0].LastHandshake.IsZero() {
		t.Fatalf("peers %+v, want b with a handshake", peers)
	}
	c, err := d.ReadCounters()
	if err != nil {
		t.Fatal(err)
	}
	if c.TxBytes < 50*100 || c.RxBytes < 50*100 {
		t.Errorf("wgctrl counters %+v, want at least the 50 datagrams each way", c)
	}
	// The peer's metrics: its handshake (time and age) and its bytes.
	if n := testutil.CollectAndCount(d); n != 4 {
		t.Errorf("%d metrics, want 4 for the one peer", n)
	}
	if problems, err := testutil.GatherAndLint(gatherer(d)); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func gatherer(c prometheus.Collector) prometheus.Gatherer {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	return reg
}
