package netns

import (
	"net"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/tunnelprobe/tunnelprobe/internal/netnstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newNS(t *testing.T) *NS {
	t.Helper()
	ns, err := New()
	if err != nil {
		netnstest.Unavailable(t, "%v", err)
	}
	t.Cleanup(func() { ns.Close() })
	return ns
}

func threadNS(t *testing.T) string {
	t.Helper()
	s, err := os.Readlink("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// What Do runs is in the namespace, and a socket it opens stays there:
// the host cannot reach a listener opened inside; the caller's thread
// never leaves its own namespace.
func TestDoRunsInTheNamespaceAndSocketsStayThere(t *testing.T) {
	ns := newNS(t)
	host := threadNS(t)
	var inside string
	var ln net.Listener
	err := ns.Do(func() (err error) {
		inside = threadNS(t)
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if inside == host {
		t.Fatalf("Do ran in the host's namespace %s", host)
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Errorf("the host reached %s, a listener opened in the namespace", ln.Addr())
	}
	var c net.Conn
	if err := ns.Do(func() (err error) { c, err = net.Dial("tcp", ln.Addr().String()); return err }); err != nil {
		t.Fatalf("the namespace's loopback: %v", err)
	}
	c.Close()
	if now := threadNS(t); now != host {
		t.Errorf("this thread is in %s after Do, not the host's %s", now, host)
	}
}

// Namespaces are apart from each other, and Do returns f's error.
func TestNamespacesAreApart(t *testing.T) {
	a, b := newNS(t), newNS(t)
	var na, nb string
	if err := a.Do(func() error { na = threadNS(t); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(func() error { nb = threadNS(t); return os.ErrNotExist }); err != os.ErrNotExist {
		t.Errorf("Do returned %v, want f's error", err)
	}
	if na == nb {
		t.Errorf("two namespaces are one: %s", na)
	}
}
