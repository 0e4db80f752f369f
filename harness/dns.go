package harness

import (
	"net"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// serveDNS answers DNS queries on conn until it is closed: an A (or AAAA)
// query for one of hosts gets its address, any other question about one of
// them an empty answer, and a name the lab does not know NXDOMAIN. It is
// what a DNS check through the tunnel needs: a server beyond it that
// answers.
func serveDNS(conn net.PacketConn, hosts map[string]netip.Addr) {
	buf := make([]byte, 512) // the classic UDP message limit; longer queries are dropped
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		if reply, ok := answerDNS(buf[:n], hosts); ok {
			_, _ = conn.WriteTo(reply, from)
		}
	}
}

// answerDNS returns the response to the query in msg, or false when msg is
// no query worth an answer (a response, or not DNS at all).
func answerDNS(msg []byte, hosts map[string]netip.Addr) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil || h.Response {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	addr, known := hosts[strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")]
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(q) != nil || b.StartAnswers() != nil {
		return nil, false
	}
	rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
	switch {
	case known && q.Type == dnsmessage.TypeA && addr.Is4():
		err = b.AResource(rr, dnsmessage.AResource{A: addr.As4()})
	case known && q.Type == dnsmessage.TypeAAAA && addr.Is6():
		err = b.AAAAResource(rr, dnsmessage.AAAAResource{AAAA: addr.As16()})
	}
	if err != nil {
		return nil, false
	}
	reply, err := b.Finish()
	return reply, err == nil
}
