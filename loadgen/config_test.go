package loadgen_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/loadgen"
)

func TestValidateNamesField(t *testing.T) {
	ok := loadgen.Config{Target: "127.0.0.1:9", Conns: 1}
	if err := ok.Validate(); err != nil {
		t.Fatalf("minimal config: %v", err)
	}
	for _, tc := range []struct {
		field string
		edit  func(*loadgen.Config)
	}{
		{"Target", func(c *loadgen.Config) { c.Target = "" }},
		{"Target", func(c *loadgen.Config) { c.Target = "no-port" }},
		{"Conns", func(c *loadgen.Config) { c.Conns = 0 }},
		{"ConnectRate", func(c *loadgen.Config) { c.ConnectRate = -1 }},
		{"Ramp", func(c *loadgen.Config) { c.Ramp = -1 }},
		{"ConnectRate and Ramp", func(c *loadgen.Config) { c.ConnectRate, c.Ramp = 10, 1 }},
		{"Duration", func(c *loadgen.Config) { c.Duration = -1 }},
		{"DialTimeout", func(c *loadgen.Config) { c.DialTimeout = -1 }},
		{"Rate", func(c *loadgen.Config) { c.Rate = -1 }},
		{"Direction", func(c *loadgen.Config) { c.Direction = 7 }},
		{"ProbeEvery", func(c *loadgen.Config) { c.ProbeEvery = -1 }},
		{"ProbeTimeout", func(c *loadgen.Config) { c.ProbeTimeout = -1 }},
		{"Sources", func(c *loadgen.Config) { c.Sources = []netip.Addr{{}} }},
		{"Sources", func(c *loadgen.Config) {
			c.Sources, c.Dialer = []netip.Addr{netip.MustParseAddr("127.0.0.2")}, &net.Dialer{}
		}},
	} {
		c := ok
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: Validate = %v, want an error naming it", tc.field, err)
		}
		if _, rerr := loadgen.Run(context.Background(), c); rerr == nil {
			t.Errorf("%s: Run accepted the config", tc.field)
		}
	}
}

func TestClassify(t *testing.T) {
	opErr := func(op string, errno syscall.Errno) error {
		return &net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, errno)}
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{opErr("dial", syscall.ECONNREFUSED), "refused"},
		{os.ErrDeadlineExceeded, "timeout"},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, "timeout"},
		{context.DeadlineExceeded, "timeout"},
		{opErr("dial", syscall.ETIMEDOUT), "timeout"},
		{opErr("read", syscall.ECONNRESET), "reset"},
		{opErr("write", syscall.EPIPE), "reset"},
		{opErr("read", syscall.ECONNABORTED), "reset"},
		{io.EOF, "reset"},
		{opErr("socket", syscall.EMFILE), "too_many_open_files"},
		{opErr("socket", syscall.ENFILE), "too_many_open_files"},
		{opErr("dial", syscall.EADDRNOTAVAIL), "address_not_available"},
		{opErr("bind", syscall.EADDRINUSE), "address_not_available"},
		{errors.New("something else"), "other"},
		{context.Canceled, "other"},
		{nil, "other"},
	} {
		if got := loadgen.Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestParseDirection(t *testing.T) {
	for _, d := range []loadgen.Direction{loadgen.Up, loadgen.Down, loadgen.Both} {
		got, err := loadgen.ParseDirection(d.String())
		if err != nil || got != d {
			t.Errorf("ParseDirection(%q) = %v, %v", d.String(), got, err)
		}
	}
	if d, err := loadgen.ParseDirection("DOWN"); err != nil || d != loadgen.Down {
		t.Errorf(`ParseDirection("DOWN") = %v, %v`, d, err)
	}
	if _, err := loadgen.ParseDirection("sideways"); err == nil {
		t.Error(`ParseDirection("sideways") succeeded`)
	}
	if loadgen.Up != loadgen.Direction(0) {
		t.Error("Up is not the zero value")
	}
}

// recordingListener remembers the remote address of every accepted
// connection.
type recordingListener struct {
	net.Listener
	remotes chan netip.Addr
}

func (l recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		select {
		case l.remotes <- c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr():
		default: // more than the test reads: never block Accept
		}
	}
	return c, err
}

func TestRunSources(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const conns = 10
	rl := recordingListener{ln, make(chan netip.Addr, conns)}
	ctx, cancel := context.WithCancel(context.Background())
	srvDone := make(chan struct{})
	go func() {
		defer close(srvDone)
		startServe(ctx, rl)
	}()
	defer func() { cancel(); <-srvDone }()

	sources := []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")}
	res, err := loadgen.Run(context.Background(), loadgen.Config{
		Target: ln.Addr().String(), Conns: conns, Duration: 1, Rate: 1e3, Sources: sources,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ConnsAchieved != conns {
		t.Fatalf("achieved %d, errors %v", res.ConnsAchieved, res.Errors)
	}
	seen := map[netip.Addr]int{}
	for range conns {
		seen[<-rl.remotes]++
	}
	for _, a := range sources {
		if seen[a] != conns/2 {
			t.Errorf("connections by source: %v, want %d from each of %v", seen, conns/2, sources)
			break
		}
	}
}
