package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

const labUsage = `usage: tunnelprobe lab [flags]            the whole lab in one process
       tunnelprobe lab server [flags]     the server peer, TLS target and sinks
       tunnelprobe lab link [flags]       the shaped link as a UDP relay
       tunnelprobe lab client [flags]     the client peer and its SOCKS5 ingress
`

// runLab implements "tunnelprobe lab". It returns the exit code: 0 after
// an interrupt (ctx done), 1 when the lab fails, 2 for bad usage.
func runLab(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "server":
			return runLabServer(ctx, args[1:], stdout, stderr)
		case "client":
			return runLabClient(ctx, args[1:], stdout, stderr)
		case "link":
			return runLabLink(ctx, args[1:], stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("tunnelprobe lab", flag.ContinueOnError)
	lf := registerLinkFlags(fs, "", "")
	socks := addrFlag(fs, "socks5", "127.0.0.1:1080", true, "SOCKS5 ingress `address` into the tunnel; empty for none")
	control := addrFlag(fs, "control", "127.0.0.1:8088", true, "HTTP control `address` (GET/PUT /link, POST /restart); empty for none")
	caOut := fs.String("ca-out", "", "write the TLS target's CA certificate (PEM) to this file")
	health := registerLabHealth(fs, "the lab's TLS target")
	if code, ok := parseCommand(fs, args, os.Getenv, labUsage, stdout, stderr, serveExclusive...); !ok {
		return code
	}
	set := lf.set
	if err := health.configure(stderr); err != nil {
		return usageError(stderr, fs.Name(), err)
	}

	lab := harness.New(harness.Config{Link: set, Seed: lf.seed, SOCKS5: *socks})
	if err := lab.Start(ctx); err != nil {
		fmt.Fprintln(stderr, "lab:", err)
		return 1
	}
	defer lab.Close()
	if *caOut != "" {
		if err := os.WriteFile(*caOut, lab.CA().PEM, 0o644); err != nil {
			fmt.Fprintln(stderr, "lab:", err)
			return 1
		}
	}
	if a := lab.SOCKS5Addr(); a != nil {
		fmt.Fprintf(stdout, "socks5 %s\n", a)
	}
	fmt.Fprintf(stdout, "tls %s (%s)\nsink %s\necho %s\n", lab.TLSAddr(), harness.TLSHost, lab.SinkAddr(), lab.EchoAddr())
	fmt.Fprintf(stdout, "link %s\n", lab.Link().Settings().Rate)
	if *caOut != "" {
		fmt.Fprintf(stdout, "ca %s\n", *caOut)
	}
	check := middleware.TLSCheck{
		Address:    lab.TLSAddr().String(),
		ServerName: harness.TLSHost,
		RootCAs:    lab.CA().Pool,
		Dialer:     lab,
	}
	runControl := func(ctx context.Context) int {
		return serveControl(ctx, *control, harness.ControlHandler(lab.Link(), lab.Restart), stdout, stderr)
	}
	return health.run(ctx, fs.Name(), check, lab.Restart, runControl, stdout, stderr)
}

// labHealthFlags are a lab role's --serve and, behind it, serve's monitor
// and log flags: the health server beside the client peer, its check fixed
// to the TLS target through the tunnel.
type labHealthFlags struct {
	serveFlags
	addr *string
	log  *slog.Logger
	cfg  middleware.Config
}

func registerLabHealth(fs *flag.FlagSet, target string) *labHealthFlags {
	h := &labHealthFlags{}
	h.registerMonitor(fs)
	h.registerLog(fs)
	h.addr = addrFlag(fs, "serve", "", true, "also run the health server on this `address`, checking "+target+" through the tunnel\n"+
		"with the mode, timeout and threshold flags; its heal restarts the client peer unless --heal-cmd is set")
	return h
}

// configure builds the logger and the monitor configuration from the parsed
// flags; an error is a usage error.
func (h *labHealthFlags) configure(stderr io.Writer) (err error) {
	h.log = h.logger(stderr)
	h.cfg, err = h.monitorConfig(h.log)
	return err
}

// run blocks in control until ctx ends, with the health server beside it
// when --serve is set; its heal is restart unless --heal-cmd is set.
func (h *labHealthFlags) run(ctx context.Context, command string, check middleware.Checker, restart middleware.HealFunc,
	control func(context.Context) int, stdout, stderr io.Writer,
) int {
	if *h.addr == "" {
		return control(ctx)
	}
	cfg := h.cfg
	if cfg.Heal == nil {
		cfg.Heal = restart // what a VPN restart is in the lab
	}
	return serveLabHealth(ctx, command, *h.addr, check, cfg, h.log, control, stdout, stderr)
}

// serveLabHealth runs a lab role's health server on addr, checking check
// with cfg, side by side with control (the role's control server, which
// blocks until its ctx ends). When one of them fails, the other is stopped.
// It returns the exit code; a bad cfg is a usage error of command.
func serveLabHealth(ctx context.Context, command, addr string, check middleware.Checker, cfg middleware.Config,
	logger *slog.Logger, control func(context.Context) int, stdout, stderr io.Writer,
) int {
	mon, err := middleware.New(check, cfg)
	if err != nil {
		return usageError(stderr, command, err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, "lab: health server:", err)
		return 1
	}
	fmt.Fprintf(stdout, "health http://%s\n", ln.Addr())
	// The control server and the health server run side by side; when one
	// fails, runCtx stops the other.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	healthDone := make(chan error, 1)
	go func() {
		err := server.Serve(runCtx, ln, mon, server.Options{Logger: logger})
		stop()
		healthDone <- err
	}()
	code := control(runCtx)
	stop()
	if err := <-healthDone; err != nil {
		fmt.Fprintln(stderr, "lab: health server:", err)
		code = max(code, 1)
	}
	return code
}

// serveControl serves h on addr (if any) and blocks until ctx is done.
func serveControl(ctx context.Context, addr string, h http.Handler, stdout, stderr io.Writer) int {
	if addr == "" {
		<-ctx.Done()
		return 0
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		fmt.Fprintln(stderr, "lab: control:", err)
		return 1
	}
	fmt.Fprintf(stdout, "control http://%s\n", ln.Addr())
	if err := httpserve.Serve(ctx, ln, h, httpserve.Options{}); err != nil {
		fmt.Fprintln(stderr, "lab: control:", err)
		return 1
	}
	return 0
}

// roleKeys returns a role's own key (--key) and its peer's public key
// (--peer); an error names the flag.
func roleKeys(keyFile, peer string) (key, peerPub harness.Key, err error) {
	if peer == "" {
		return key, peerPub, errors.New("flag --peer is required: the peer's public key, in base64 or a file holding it")
	}
	if peerPub, err = harness.ReadKey(peer); err != nil {
		return key, peerPub, fmt.Errorf("invalid value for flag --peer: %w", err)
	}
	if key, err = harness.LoadOrCreateKeyFile(keyFile); err != nil {
		return key, peerPub, fmt.Errorf("invalid value for flag --key: %w", err)
	}
	return key, peerPub, nil
}

func runLabServer(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tunnelprobe lab server", flag.ContinueOnError)
	listen := addrFlag(fs, "listen", "127.0.0.1:51820", false, "WireGuard UDP `address`")
	keyFile := fs.String("key", "", "private key file (created if missing); empty generates a key")
	pubOut := fs.String("pub-out", "", "write the public key to this file")
	peer := fs.String("peer", "", "the client's public key, base64 or a file holding it (required)")
	caOut := fs.String("ca-out", "", "write the TLS target's CA certificate (PEM) to this file")
	if code, ok := parseCommand(fs, args, os.Getenv, labUsage, stdout, stderr); !ok {
		return code
	}
	key, pk, err := roleKeys(*keyFile, *peer)
	if err != nil {
		return usageError(stderr, fs.Name(), err)
	}
	srv := harness.NewServer(harness.ServerConfig{PrivateKey: key, ClientPublicKey: pk, Listen: *listen})
	if err := srv.Start(ctx); err != nil {
		fmt.Fprintln(stderr, "lab server:", err)
		return 1
	}
	defer srv.Close()
	if code := writeOutputs(*pubOut, key.Public(), *caOut, srv.CA().PEM, stderr); code != 0 {
		return code
	}
	fmt.Fprintf(stdout, "wireguard %s\npublic-key %s\ntls %s (%s)\nsink %s\necho %s\n",
		srv.UDPAddr(), key.Public(), srv.TLSAddr(), harness.TLSHost, srv.SinkAddr(), srv.EchoAddr())
	<-ctx.Done()
	return 0
}

func writeOutputs(pubOut string, pub harness.Key, caOut string, ca []byte, stderr io.Writer) int {
	if pubOut != "" {
		if err := os.WriteFile(pubOut, []byte(pub.String()+"\n"), 0o644); err != nil {
			fmt.Fprintln(stderr, "lab:", err)
			return 1
		}
	}
	if caOut != "" {
		if err := os.WriteFile(caOut, ca, 0o644); err != nil {
			fmt.Fprintln(stderr, "lab:", err)
			return 1
		}
	}
	return 0
}

func runLabLink(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tunnelprobe lab link", flag.ContinueOnError)
	lf := registerLinkFlags(fs, "", "")
	listen := addrFlag(fs, "listen", "127.0.0.1:51821", false, "UDP `address` the client peer sends to")
	server := fs.String("server", "127.0.0.1:51820", "the server peer's UDP address")
	control := addrFlag(fs, "control", "127.0.0.1:8088", true, "HTTP control `address` (GET/PUT /link); empty for none")
	if code, ok := parseCommand(fs, args, os.Getenv, labUsage, stdout, stderr); !ok {
		return code
	}
	set := lf.set
	srvAddr, err := harness.ResolveUDP(ctx, *server)
	if err != nil {
		return usageError(stderr, fs.Name(), fmt.Errorf("invalid value %q for flag --server: %w", *server, err))
	}
	serverListen, err := serverSideListen(srvAddr)
	if err != nil {
		fmt.Fprintln(stderr, "lab link: towards the server:", err)
		return 1
	}
	link := harness.NewLink(harness.LinkConfig{Settings: set, Seed: lf.seed, Listen: *listen, Server: srvAddr, ServerListen: serverListen})
	if err := link.Start(ctx); err != nil {
		fmt.Fprintln(stderr, "lab link:", err)
		return 1
	}
	defer link.Close()
	fmt.Fprintf(stdout, "link %s -> %s (rate %s, delay %s, queue %s)\n", link.Addr(), srvAddr, set.Rate, set.Delay, set.Queue)
	return serveControl(ctx, *control, harness.ControlHandler(link, nil), stdout, stderr)
}

// serverSideListen returns the local address the relay sends to the server
// from: loopback when the server is there (the default), else the address
// that routes to the server (a server in another container or host). It is
// a plain IPv4 or IPv6 address, not a dual-stack wildcard, so the server's
// packets come back from exactly the address the link was given and the
// link accepts them.
func serverSideListen(server netip.AddrPort) (string, error) {
	if server.Addr().IsLoopback() {
		return "", nil
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(server)) // sends nothing: picks the route
	if err != nil {
		return "", err
	}
	defer c.Close()
	return netip.AddrPortFrom(c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap(), 0).String(), nil
}

// startSOCKS5 serves the SOCKS5 ingress into cl's tunnel on addr.
func startSOCKS5(ctx context.Context, addr string, cl *harness.Client) (*harness.SOCKS5, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &harness.SOCKS5{Dial: cl.DialContext}
	if err := s.Start(ln); err != nil {
		ln.Close()
		return nil, err
	}
	return s, nil
}

func runLabClient(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tunnelprobe lab client", flag.ContinueOnError)
	listen := addrFlag(fs, "listen", "127.0.0.1:0", false, "WireGuard UDP `address`")
	endpoint := fs.String("endpoint", "127.0.0.1:51821", "where to send: the link, or the server peer")
	keyFile := fs.String("key", "", "private key file (created if missing); empty generates a key")
	pubOut := fs.String("pub-out", "", "write the public key to this file")
	peer := fs.String("peer", "", "the server's public key, base64 or a file holding it (required)")
	socks := addrFlag(fs, "socks5", "127.0.0.1:1080", true, "SOCKS5 ingress `address`; empty for none")
	control := addrFlag(fs, "control", "", true, "HTTP control `address` (POST /restart); empty for none")
	// The health server, as in the one-process lab. The target's CA comes
	// from the server peer (its --ca-out), in a file shared with it.
	health := registerLabHealth(fs, "the TLS target")
	tlsCA := fs.String("tls-ca", "", "PEM `file` of the TLS target's CA (the server's --ca-out), read again whenever it changes;\n"+
		"required with --serve")
	if code, ok := parseCommand(fs, args, os.Getenv, labUsage, stdout, stderr, serveExclusive...); !ok {
		return code
	}
	if err := health.configure(stderr); err != nil {
		return usageError(stderr, fs.Name(), err)
	}
	if *health.addr != "" && *tlsCA == "" {
		return usageError(stderr, fs.Name(), errors.New("--serve needs --tls-ca, the TLS target's CA file"))
	}
	key, pk, err := roleKeys(*keyFile, *peer)
	if err != nil {
		return usageError(stderr, fs.Name(), err)
	}
	ep, err := harness.ResolveUDP(ctx, *endpoint)
	if err != nil {
		return usageError(stderr, fs.Name(), fmt.Errorf("invalid value %q for flag --endpoint: %w", *endpoint, err))
	}
	if code := writeOutputs(*pubOut, key.Public(), "", nil, stderr); code != 0 {
		return code
	}
	cl := harness.NewClient(harness.ClientConfig{PrivateKey: key, ServerPublicKey: pk, Endpoint: ep, Listen: *listen})
	if err := cl.Start(ctx); err != nil {
		fmt.Fprintln(stderr, "lab client:", err)
		return 1
	}
	defer cl.Close()
	fmt.Fprintf(stdout, "wireguard %s -> %s\npublic-key %s\n", cl.UDPAddr(), ep, key.Public())
	if *socks != "" {
		s, err := startSOCKS5(ctx, *socks, cl)
		if err != nil {
			fmt.Fprintln(stderr, "lab client: socks5:", err)
			return 1
		}
		defer s.Close()
		fmt.Fprintf(stdout, "socks5 %s\n", s.Addr())
	}
	runControl := func(ctx context.Context) int {
		return serveControl(ctx, *control, harness.ControlHandler(nil, cl.Restart), stdout, stderr)
	}
	return health.run(ctx, fs.Name(), labTargetCheck(cl, *tlsCA), cl.Restart, runControl, stdout, stderr)
}

// labTargetCheck is the check of the lab's TLS target through cl's tunnel,
// verified with the CA the server peer writes to caFile (a new one at each
// of its starts).
func labTargetCheck(cl *harness.Client, caFile string) *middleware.CAFileTLSCheck {
	return &middleware.CAFileTLSCheck{
		TLS: middleware.TLSCheck{
			Address:    netip.AddrPortFrom(harness.ServerTunnelAddr, harness.TLSPort).String(),
			ServerName: harness.TLSHost,
			Dialer:     cl,
		},
		CAFile: caFile,
	}
}
