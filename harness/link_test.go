package harness

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

func udpSock(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func recvOne(t *testing.T, c *net.UDPConn) string {
	t.Helper()
	got, _ := recvFrom(t, c)
	return got
}

// recvFrom returns the next datagram on c and where it came from.
func recvFrom(t *testing.T, c *net.UDPConn) (string, netip.AddrPort) {
	t.Helper()
	buf := make([]byte, 2048)
	c.SetReadDeadline(time.Now().Add(5 * time.Second)) // safety net only
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n]), from
}

func TestLinkRelaysBothWaysAndFollowsClient(t *testing.T) {
	server := udpSock(t)
	l := NewLink(LinkConfig{Server: server.LocalAddr().(*net.UDPAddr).AddrPort(), Settings: Settings{Rate: 10_000_000}})
	offered := make(chan bool, 16) // one per packet the uplink read, accepted or not
	l.enqueued = func(fromClient, accepted bool) {
		if fromClient {
			offered <- accepted
		}
	}
	if err := l.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	toLink := net.UDPAddrFromAddrPort(l.Addr())

	client := udpSock(t)
	client.WriteToUDP([]byte("up"), toLink)
	got, first := recvFrom(t, server)
	if got != "up" {
		t.Fatalf("server got %q", got)
	}
	server.WriteToUDP([]byte("down"), net.UDPAddrFromAddrPort(l.ServerSideAddr()))
	if got := recvOne(t, client); got != "down" {
		t.Fatalf("client got %q", got)
	}

	// A restarted client comes from a new port; replies follow it, and
	// the server sees it from a new port too, as behind a NAT: OpenVPN's
	// server would take it for the old client's session otherwise.
	client2 := udpSock(t)
	client2.WriteToUDP([]byte("again"), toLink)
	got, second := recvFrom(t, server)
	if got != "again" {
		t.Fatalf("server got %q", got)
	}
	if second == first {
		t.Errorf("the server sees the restarted client from the old client's address %v", first)
	}
	server.WriteToUDP([]byte("back"), net.UDPAddrFromAddrPort(l.ServerSideAddr()))
	if got := recvOne(t, client2); got != "back" {
		t.Fatalf("new client got %q", got)
	}

	// Live change: an outage drops, and the counters say so.
	if err := l.Update(func(s *Settings) { s.Down = true }); err != nil {
		t.Fatal(err)
	}
	client2.WriteToUDP([]byte("lost"), toLink)
	// Sync point: the relay has read and dropped it before the link is up.
	for range 2 { // the uplink's two packets before it went through
		if !<-offered {
			t.Fatal("a packet sent before the outage was not queued")
		}
	}
	select {
	case accepted := <-offered:
		if accepted {
			t.Fatal("the packet sent during the outage was queued")
		}
	case <-time.After(5 * time.Second): // safety net only
		t.Fatal("the packet sent during the outage never reached the relay")
	}
	l.Update(func(s *Settings) { s.Down = false })
	client2.WriteToUDP([]byte("after"), toLink)
	if got := recvOne(t, server); got != "after" {
		t.Fatalf("server got %q after the outage", got)
	}
	st := l.Stats()
	if st.Uplink.Packets != 3 || st.Downlink.Packets != 2 || st.Uplink.OutageDrops != 1 {
		t.Fatalf("counters %+v", st)
	}
	if err := l.Update(func(s *Settings) { s.Loss = 2 }); err == nil {
		t.Fatal("accepted loss 2")
	}
}

// The MTU holds both ways, and a drop for it says so in the direction's
// counters: a path that filters ICMP "fragmentation needed" answers
// nothing.
func TestLinkMTUDropsBothWays(t *testing.T) {
	server := udpSock(t)
	l := NewLink(LinkConfig{Server: server.LocalAddr().(*net.UDPAddr).AddrPort(), Settings: Settings{MTU: 1280}})
	offered := make(chan bool, 16)
	l.enqueued = func(_, accepted bool) { offered <- accepted }
	if err := l.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client := udpSock(t)
	fits, over := string(make([]byte, 1280-LinkHeaders)), make([]byte, 1280-LinkHeaders+1)
	send := func(c *net.UDPConn, to netip.AddrPort, b []byte, wantAccepted bool) {
		t.Helper()
		c.WriteToUDP(b, net.UDPAddrFromAddrPort(to))
		if accepted := <-offered; accepted != wantAccepted {
			t.Fatalf("%d bytes: accepted %v, want %v", len(b), accepted, wantAccepted)
		}
	}
	send(client, l.Addr(), over, false)
	send(client, l.Addr(), []byte(fits), true)
	if got := recvOne(t, server); got != fits {
		t.Fatalf("server got %d bytes, want %d", len(got), len(fits))
	}
	send(server, l.ServerSideAddr(), over, false)
	send(server, l.ServerSideAddr(), []byte(fits), true)
	if got := recvOne(t, client); got != fits {
		t.Fatalf("client got %d bytes, want %d", len(got), len(fits))
	}
	st := l.Stats()
	if st.Uplink.MTUDrops != 1 || st.Downlink.MTUDrops != 1 || st.Uplink.Packets != 1 || st.Downlink.Packets != 1 || st.Settings.MTU != 1280 {
		t.Fatalf("stats %+v; want one delivered and one MTU drop each way", st)
	}
	if err := l.Update(func(s *Settings) { s.MTU = 100 }); err == nil {
		t.Fatal("accepted MTU 100")
	}
}
