package testnet

import (
	"net"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// A Resolver answers every DNS query that reaches its socket with one
// rcode and no records, as a stub or an intercepting resolver does (one
// whose uplink is dead answers SERVFAIL), and records the names it was
// asked. It is safe for concurrent use.
type Resolver struct {
	mu    sync.Mutex
	rcode dnsmessage.RCode
	names []string
}

// ServeResolver answers the queries that reach pc with rcode until the
// test ends, when it closes pc.
func ServeResolver(t testing.TB, pc net.PacketConn, rcode dnsmessage.RCode) *Resolver {
	t.Helper()
	r := &Resolver{rcode: rcode}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp, ok := r.answer(buf[:n]); ok {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return r
}

// answer records the query's name and returns the response to it; ok is
// false for what is not a query.
func (r *Resolver) answer(query []byte) (resp []byte, ok bool) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	r.mu.Lock()
	r.names = append(r.names, q.Name.String())
	rcode := r.rcode
	r.mu.Unlock()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, RCode: rcode, RecursionAvailable: true})
	_ = b.StartQuestions()
	_ = b.Question(q)
	resp, err = b.Finish()
	return resp, err == nil
}

// SetRCode makes the resolver answer the queries to come with rcode.
func (r *Resolver) SetRCode(rcode dnsmessage.RCode) {
	r.mu.Lock()
	r.rcode = rcode
	r.mu.Unlock()
}

// Asked returns the names asked so far, in order.
func (r *Resolver) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.names...)
}
