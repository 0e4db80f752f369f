package check_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/tunnelprobe/tunnelprobe/internal/testnet"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// resolverAnswering answers every query on 127.0.0.1 over UDP with rcode
// and no records, as a stub or an intercepting resolver whose uplink is
// dead answers SERVFAIL, and returns its address and the names it was
// asked.
func resolverAnswering(t *testing.T, rcode dnsmessage.RCode) (addr string, asked func() []string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return pc.LocalAddr().String(), testnet.ServeResolver(t, pc, rcode).Asked
}

// Only NOERROR and NXDOMAIN prove that the name was looked up: SERVFAIL and
// REFUSED are what any resolver on the way answers when the path beyond it
// is dead, and fail the query, saying so. The upstream's model passes on
// any answer, as the upstream does.
func TestDNSQueryCountsOnlyAnswersOfALookup(t *testing.T) {
	for _, tc := range []struct {
		rcode dnsmessage.RCode
		pass  bool
		name  string
	}{
		{dnsmessage.RCodeSuccess, true, ""},
		{dnsmessage.RCodeNameError, true, ""},
		{dnsmessage.RCodeServerFailure, false, "SERVFAIL"},
		{dnsmessage.RCodeRefused, false, "REFUSED"},
		{dnsmessage.RCodeFormatError, false, "FORMERR"},
	} {
		server, _ := resolverAnswering(t, tc.rcode)
		err := check.DNSQuery{Server: server}.Check(checkCtx(t))
		switch {
		case tc.pass && err != nil:
			t.Errorf("%v: %v, want a pass", tc.rcode, err)
		case !tc.pass && (!errors.Is(err, check.ErrAnswerProvesNothing) || !strings.Contains(err.Error(), tc.name)):
			t.Errorf("%v: %v, want a failure naming %s that proves nothing", tc.rcode, err, tc.name)
		}
		if err := (check.DNSQuery{Server: server, AnyAnswer: true}).Check(checkCtx(t)); err != nil {
			t.Errorf("%v with AnyAnswer: %v, want a pass", tc.rcode, err)
		}
	}
}

// With FreshLabel every query asks for a name never asked before, under the
// query's zone: no cache can hold its answer.
func TestDNSQueryFreshLabelAsksANewNameEachTime(t *testing.T) {
	server, asked := resolverAnswering(t, dnsmessage.RCodeNameError)
	q := check.DNSQuery{Server: server, Name: "probe.example", FreshLabel: true}
	for range 3 {
		if err := q.Check(checkCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
	names := asked()
	seen := map[string]bool{}
	for _, n := range names {
		label, zone, _ := strings.Cut(n, ".")
		if zone != "probe.example." || len(label) < 12 || seen[n] {
			t.Errorf("asked %q: want a fresh label under probe.example.", n)
		}
		seen[n] = true
	}
	if len(names) != 3 {
		t.Errorf("asked %v, want 3 queries", names)
	}
}

// A padded query's IP packet is as big as asked: EDNS(0) padding fills it.
func TestDNSQuerySizePadsTheQuery(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	got := make(chan int, 1)
	go func() {
		buf := make([]byte, 2000)
		n, _, err := pc.ReadFrom(buf)
		if err == nil {
			got <- n
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_ = check.DNSQuery{Server: pc.LocalAddr().String(), FreshLabel: true, Size: 1400}.Check(ctx)
	select {
	case n := <-got:
		if n+28 != 1400 {
			t.Errorf("the query's IP packet is %d bytes, want 1400", n+28)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no query arrived")
	}
	if err := (check.DNSQuery{Server: pc.LocalAddr().String(), Size: 40}).Check(ctx); err == nil || !strings.Contains(err.Error(), "size 40") {
		t.Errorf("a size below the query's own: %v", err)
	}
}
