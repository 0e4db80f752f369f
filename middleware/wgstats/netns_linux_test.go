package wgstats_test

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"
	"golang.zx2c4.com/wireguard/ipc"
	"golang.zx2c4.com/wireguard/tun"
	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/wgstats"
)

// unavailable skips the test, or fails it where kernel devices are
// required (TUNNELPROBE_REQUIRE_DOCKER=1, as in CI).
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("TUNNELPROBE_REQUIRE_DOCKER") == "1" {
		t.Fatalf("kernel devices required: "+format, args...)
	}
	t.Skipf("kernel devices unavailable: "+format, args...)
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// newNetns creates a network namespace for the test and deletes it, with
// every device in it, when the test ends.
func newNetns(t *testing.T, suffix string) string {
	t.Helper()
	name := fmt.Sprintf("tp%d%s", os.Getpid(), suffix)
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		unavailable(t, "ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ip(t, "-n", name, "link", "set", "lo", "up")
	return name
}

// inNetns runs f on a thread in network namespace ns. Sockets and devices
// f creates stay there.
func inNetns(t *testing.T, ns string, f func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			done <- err
			return
		}
		defer orig.Close()
		target, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			done <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		f()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- err // the thread stays locked and dies with the goroutine
			return
		}
		runtime.UnlockOSThread()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// startWireGuard runs wireguard-go on a kernel TUN device name in ns, with
// address addr, listening on port and with one peer, and serves its UAPI
// socket, which wgctrl reads. It is closed when the test ends.
func startWireGuard(t *testing.T, ns, name, addr string, port int, key wgtypes.Key, peer wgtypes.Key, endpoint string) {
	t.Helper()
	var dev *device.Device
	var uapi net.Listener
	var err error
	inNetns(t, ns, func() {
		var td tun.Device
		if td, err = tun.CreateTUN(name, 1420); err != nil {
			return
		}
		dev = device.NewDevice(td, conn.NewDefaultBind(), device.NewLogger(device.LogLevelSilent, ""))
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
		unavailable(t, "wireguard-go on a TUN device: %v", err)
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
	ip(t, "-n", ns, "addr", "add", addr, "dev", name)
	ip(t, "-n", ns, "link", "set", name, "up")
}

// TestKernelDevices checks both kernel sources on real devices: a veth pair
// between two namespaces the test creates, and a wg0 of wireguard-go on a
// kernel TUN device in each, read through /proc and through wgctrl.
func TestKernelDevices(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		unavailable(t, "needs Linux and root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		unavailable(t, "no ip command")
	}
	a, b := newNetns(t, "a"), newNetns(t, "b")
	ip(t, "link", "add", "tpveth-a", "netns", a, "type", "veth", "peer", "name", "tpveth-b", "netns", b)
	ip(t, "-n", a, "addr", "add", "10.231.0.1/30", "dev", "tpveth-a")
	ip(t, "-n", b, "addr", "add", "10.231.0.2/30", "dev", "tpveth-b")
	ip(t, "-n", a, "link", "set", "tpveth-a", "up")
	ip(t, "-n", b, "link", "set", "tpveth-b", "up")

	keyA, _ := wgtypes.GeneratePrivateKey()
	keyB, _ := wgtypes.GeneratePrivateKey()
	wgA, wgB := fmt.Sprintf("tpwg%da", os.Getpid()%10000), fmt.Sprintf("tpwg%db", os.Getpid()%10000)
	startWireGuard(t, a, wgA, "10.232.0.1/24", 51820, keyA, keyB.PublicKey(), "10.231.0.2:51820")
	startWireGuard(t, b, wgB, "10.232.0.2/24", 51820, keyB, keyA.PublicKey(), "10.231.0.1:51820")

	read := func(ns, iface string) (c middleware.Counters) {
		inNetns(t, ns, func() {
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
	inNetns(t, b, func() {
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
	inNetns(t, a, func() {
		c, err := net.Dial("udp4", "10.232.0.2:9999")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		buf := make([]byte, 100)
		for range 50 {
			_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // the first waits for the handshake
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
