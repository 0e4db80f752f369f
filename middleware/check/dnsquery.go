package check

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/tunnelprobe/tunnelprobe/internal/hostport"
)

// defaultDNSQueryName is the name a DNSQuery asks about when its Name
// is empty.
const defaultDNSQueryName = "cloudflare.com."

// DNSQuery passes when Server answers one DNS query sent over UDP with
// NOERROR or NXDOMAIN: the name was looked up, not what it resolves to.
// SERVFAIL, REFUSED and the other rcodes fail it: any resolver on the way
// (a cache, a stub on the host, a provider's intercepting resolver at the
// VPN server) answers them whether or not the path beyond it works. Unlike
// [DNS] it asks that one server once, with no resolver, cache, search
// domains, /etc/hosts or fallback to TCP in the way: the plain DNS over
// UDP check of the upstream VPN client, for tunnels where ICMP is not
// permitted.
//
// A cache answers a name it has seen, NOERROR and NXDOMAIN alike: with
// FreshLabel every query asks for a name never asked before, which only
// the zone's authoritative servers can answer, through the whole path.
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
	// FreshLabel puts a random label before Name in every query
	// ("k3x9q2m7.cloudflare.com."), so that no cache holds the answer.
	FreshLabel bool
	// AnyAnswer passes on any response to the query, SERVFAIL and REFUSED
	// included, as the upstream VPN client's DNS check does: for its model
	// (package preset), not for a check that must prove the path.
	AnyAnswer bool
	// Size, when positive, pads the query with EDNS(0) padding (RFC 7830)
	// so that its IP packet (over IPv4: 20 bytes of IP and 8 of UDP
	// headers) is Size bytes long: a probe of the path MTU, whose small
	// answer proves the big query arrived. On a socket of this host's (no
	// Dialer, or a BoundDialer) it is sent with Don't Fragment whatever
	// MTU the kernel learnt for the path, as an ICMP check's is: fragments
	// of it would cross a path that drops the whole; that needs Linux, and
	// elsewhere such a query on a socket of this host's fails, as an ICMP
	// check's of a Size does. Zero: no padding.
	Size int
}

var _ Checker = DNSQuery{}

// String names the check as its errors do: "udp-dns 1.1.1.1:53".
func (c DNSQuery) String() string { return "udp-dns " + hostport.WithDefault(c.Server, "53") }

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
	query, err := packQuery(id, q, c.Size)
	if err != nil {
		return fail("query", err)
	}

	conn, err := dialLive(ctx, c.Dialer, "udp", server)
	if err != nil {
		return fail("dial", err)
	}
	defer conn.Close()
	defer endWithContext(ctx, conn)()
	if c.Size > 0 {
		if err := dontFragment(conn); err != nil {
			return fail("socket", err)
		}
	}
	if _, err := conn.Write(query); err != nil {
		return fail("query", err)
	}
	buf := make([]byte, 1232) // EDNS's safe UDP size; a longer answer is truncated, and still an answer
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return fail("answer", err)
		}
		rcode, ok := answers(buf[:n], id, q)
		switch {
		case !ok:
			continue
		case c.AnyAnswer || rcode == dnsmessage.RCodeSuccess || rcode == dnsmessage.RCodeNameError:
			return nil
		}
		return fail("answer", fmt.Errorf("%w: %s, which any resolver on the way gives whatever the path beyond it", ErrAnswerProvesNothing, rcodeName(rcode)))
	}
}

// dontFragment makes a UDP socket of this host's send with Don't Fragment,
// whatever MTU the kernel learnt for the path (see DNSQuery.Size); a
// connection of a dialer's own (a netstack) is left as it is.
func dontFragment(conn net.Conn) error {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	to, _ := conn.RemoteAddr().(*net.UDPAddr)
	return setProbePMTU(raw, to != nil && to.IP.To4() == nil)
}

// ednsPadding is the EDNS(0) option code of padding (RFC 7830).
const ednsPadding = 12

// packQuery packs the query id asking q, padded to an IP packet of size
// bytes when size is positive.
func packQuery(id uint16, q dnsmessage.Question, size int) ([]byte, error) {
	msg := dnsmessage.Message{Header: dnsmessage.Header{ID: id, RecursionDesired: true}, Questions: []dnsmessage.Question{q}}
	if size <= 0 {
		return msg.Pack()
	}
	pad := func(n int) ([]byte, error) {
		var opt dnsmessage.Resource
		if err := opt.Header.SetEDNS0(1232, dnsmessage.RCodeSuccess, false); err != nil {
			return nil, err
		}
		opt.Body = &dnsmessage.OPTResource{Options: []dnsmessage.Option{{Code: ednsPadding, Data: make([]byte, n)}}}
		msg.Additionals = []dnsmessage.Resource{opt}
		return msg.Pack()
	}
	bare, err := pad(0)
	if err != nil {
		return nil, err
	}
	const headers = 20 + 8 // IPv4 and UDP
	n := size - headers - len(bare)
	if n < 0 || size > 65535 {
		return nil, fmt.Errorf("size %d is not between %d and 65535 bytes", size, headers+len(bare))
	}
	return pad(n)
}

// ErrAnswerProvesNothing is wrapped by the error of a [DNSQuery] answered
// with an rcode that a resolver gives whether or not the path beyond it
// works (SERVFAIL, REFUSED...).
var ErrAnswerProvesNothing = errors.New("the answer proves nothing")

// rcodeName is an rcode's name as DNS tools print it.
func rcodeName(r dnsmessage.RCode) string {
	switch r {
	case dnsmessage.RCodeFormatError:
		return "FORMERR"
	case dnsmessage.RCodeServerFailure:
		return "SERVFAIL"
	case dnsmessage.RCodeNotImplemented:
		return "NOTIMP"
	case dnsmessage.RCodeRefused:
		return "REFUSED"
	}
	return fmt.Sprintf("rcode %d", r)
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
	if c.FreshLabel {
		name = freshLabel() + "." + name
	}
	n, err := dnsmessage.NewName(name)
	if err != nil {
		return dnsmessage.Question{}, errors.New("name " + name + " is too long")
	}
	return dnsmessage.Question{Name: n, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}, nil
}

// answers reports whether msg is a response to the query id asking q, and
// its rcode.
func answers(msg []byte, id uint16, q dnsmessage.Question) (dnsmessage.RCode, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil || !h.Response || h.ID != id {
		return 0, false
	}
	got, err := p.Question()
	ok := err == nil && got.Type == q.Type && got.Class == q.Class && strings.EqualFold(got.Name.String(), q.Name.String())
	return h.RCode, ok
}

// freshLabel returns a random DNS label of 16 letters and digits: 82 bits,
// never asked before.
func freshLabel() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b [16]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}
