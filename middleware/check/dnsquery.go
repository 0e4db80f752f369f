package check

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"strings"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/tunnelprobe/tunnelprobe/internal/hostport"
)

// defaultDNSQueryName is the name a DNSQuery asks about when its Name
// is empty.
const defaultDNSQueryName = "cloudflare.com."

// DNSQuery passes when Server answers one DNS query sent over UDP:
// any well-formed response to it passes, NXDOMAIN and SERVFAIL included,
// since what it tests is that a packet crossed the tunnel and an answer
// came back, not what the name resolves to. Unlike [DNS] it asks that
// one server once, with no resolver, cache, search domains, /etc/hosts or
// fallback to TCP in the way: the plain DNS over UDP check of the upstream
// VPN client, for tunnels where ICMP is not permitted.
//
// A response must carry the query's ID and question; anything else that
// arrives is ignored, and the deadline decides. A DNSQuery holds no
// state and is safe for concurrent use.
type DNSQuery struct {
	// Server is "host:port" of the DNS server; port 53 when missing.
	Server string
	// Name is the name asked about (type A); cloudflare.com. when
	// empty.
	Name string
	// Dialer carries the query ("udp"); nil means a plain net.Dialer.
	Dialer Dialer
}

var _ Checker = DNSQuery{}

// Check sends the query and waits for its response until ctx ends.
func (c DNSQuery) Check(ctx context.Context) error {
	server := hostport.WithDefault(c.Server, "53")
	fail := func(step string, err error) error { return newStepError(ctx, "udp-dns", server, step, err) }
	q, err := c.question()
	if err != nil {
		return fail("query", err)
	}
	var idb [2]byte
	_, _ = rand.Read(idb[:])
	id := binary.BigEndian.Uint16(idb[:])
	msg := dnsmessage.Message{Header: dnsmessage.Header{ID: id, RecursionDesired: true}, Questions: []dnsmessage.Question{q}}
	query, err := msg.Pack()
	if err != nil {
		return fail("query", err)
	}

	conn, err := dialLive(ctx, c.Dialer, "udp", server)
	if err != nil {
		return fail("dial", err)
	}
	defer conn.Close()
	defer endWithContext(ctx, conn)()
	if _, err := conn.Write(query); err != nil {
		return fail("query", err)
	}
	buf := make([]byte, 1232) // EDNS's safe UDP size; a longer answer is truncated, and still an answer
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return fail("answer", err)
		}
		if answers(buf[:n], id, q) {
			return nil
		}
	}
}

// question returns the query's question.
func (c DNSQuery) question() (dnsmessage.Question, error) {
	name := c.Name
	if name == "" {
		name = defaultDNSQueryName
	}
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	n, err := dnsmessage.NewName(name)
	if err != nil {
		return dnsmessage.Question{}, errors.New("name " + name + " is too long")
	}
	return dnsmessage.Question{Name: n, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}, nil
}

// answers reports whether msg is a response to the query id asking q.
func answers(msg []byte, id uint16, q dnsmessage.Question) bool {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil || !h.Response || h.ID != id {
		return false
	}
	got, err := p.Question()
	return err == nil && got.Type == q.Type && got.Class == q.Class && strings.EqualFold(got.Name.String(), q.Name.String())
}
