package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"

	"github.com/tunnelprobe/tunnelprobe/cmd/tunnelprobe/internal/serveflags"
	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
	"github.com/tunnelprobe/tunnelprobe/internal/output"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

const labUsage = `Usage: tunnelprobe lab [flags]            the whole lab in one process
       tunnelprobe lab server [flags]     the server peer, TLS target and sinks
       tunnelprobe lab link [flags]       the shaped link as a UDP relay
       tunnelprobe lab client [flags]     the client peer and its SOCKS5 ingress
       tunnelprobe lab pause              hold a network namespace, as a pod's pause does

A WireGuard tunnel in user space (wireguard-go over a netstack; no root and
no kernel device but with the client's --tun) between a client peer and a
server peer, over a link shaped like a real one (rate, delay, queue, loss,
and an MTU past which packets vanish, as in an MTU black hole):
the server peer serves a TLS target, sinks for the load generator and
answers ICMP echoes; the client peer offers a SOCKS5 ingress into the
tunnel. --control serves the link's settings, outages included (GET/PUT
/link), and restarts the client (POST /restart); --serve runs the health
server beside the client, checking the TLS target through the tunnel. The roles run the same parts as separate
processes or containers; with --tun the client runs on a kernel TUN device,
as a VPN container does, for every program in its network namespace
(docs/lab.md). With --tunnel openvpn the whole lab runs the real openvpn
instead, client and server on kernel TUN devices in network namespaces of
its own (root, /dev/net/tun and Debian's openvpn), its transport over UDP
or, with --transport tcp, over one TCP connection across the same link.
The server and client roles run it apart with --openvpn DIR, each in its
own network namespace (a container's), sharing DIR's files: the server
writes them (its PKI, kept across its restarts, and the client's inline
client.ovpn, whose remote is --remote: the link, say), the client runs
openvpn on them with its control API. Ctrl-C stops it.
`

// labCommand implements "tunnelprobe lab". It returns the exit code: 0 after
// an interrupt (ctx done), 1 when the lab fails, 2 for bad usage.
func labCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if code, ok := runLabRole(ctx, args, getenv, stdout, stderr); ok {
		return code
	}
	fs := flag.NewFlagSet("tunnelprobe lab", flag.ContinueOnError)
	lf := registerLinkFlags(fs, "", "")
	tf := registerTunnelFlags(fs, "")
	socks := cliflag.AddrVar(fs, "socks5", "127.0.0.1:1080", true, "SOCKS5 ingress `address` into the tunnel; empty for none")
	control := cliflag.AddrVar(fs, "control", "127.0.0.1:8088", true, "HTTP control `address` (GET/PUT /link, POST /restart); empty for none")
	caOut := fs.String("ca-out", "", "write the TLS target's CA certificate (PEM) to this file")
	var health serveflags.Lab
	health.RegisterLab(fs, "the lab's TLS target")
	if code, ok := cliflag.ParseCommand(fs, args, getenv, labUsage, stdout, stderr, serveflags.Exclusive...); !ok {
		return code
	}
	if err := health.Configure(fs, stderr); err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	if err := tf.check(cliflag.Given(fs)); err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	lab, err := tf.start(ctx, lf)
	if err != nil {
		if ctx.Err() != nil {
			return 0 // interrupted while starting, as after it: nothing failed
		}
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	defer lab.Close()
	ctx, stopWatch := watchExits(ctx, lab, false, stderr)
	defer stopWatch()
	if err := writeFile(*caOut, lab.CA().PEM); err != nil {
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	if *socks != "" {
		s, err := harness.ListenSOCKS5(ctx, *socks, lab.DialContext)
		if err != nil {
			return cliflag.ExitCode(stderr, fs.Name(), err)
		}
		defer s.Close()
		fmt.Fprintf(stdout, "socks5 %s\n", s.Addr())
	}
	printLab(stdout, tf, lab, *caOut)
	srv, err := health.Server(lab.TLSCheck(), lab.Restart, lab)
	if err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	code := serveRole(ctx, fs.Name(), srv, health.Addr, *control, harness.ControlHandler(lab.Link(), lab.Restart), stdout, stderr)
	if err := stopWatch(); err != nil {
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	return code
}

// runLabRole runs the role args name ("server", "client", "link",
// "pause"), if they name one.
func runLabRole(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case "server":
		return runLabServer(ctx, args[1:], getenv, stdout, stderr), true
	case "client":
		return runLabClient(ctx, args[1:], getenv, stdout, stderr), true
	case "link":
		return runLabLink(ctx, args[1:], getenv, stdout, stderr), true
	case "pause": // the containers that join its namespace outlive each other's restarts
		fs := flag.NewFlagSet("tunnelprobe lab pause", flag.ContinueOnError)
		if code, ok := cliflag.ParseCommand(fs, args[1:], getenv, labUsage, stdout, stderr); !ok {
			return code, true
		}
		<-ctx.Done()
		return 0, true
	}
	return 0, false
}

// printLab prints what the whole lab offers: its tunnel, the in-tunnel
// addresses of its targets, its link and where its CA went.
func printLab(stdout io.Writer, tf *tunnelFlags, lab labTunnel, caOut string) {
	fmt.Fprintf(stdout, "tunnel %s\ntls %s (%s)\nsink %s\necho %s\n", tf, lab.TLSAddr(), harness.TLSHost, lab.SinkAddr(),
		netip.AddrPortFrom(lab.SinkAddr().Addr(), harness.EchoPort))
	fmt.Fprintf(stdout, "link %s\n", lab.Link().Settings())
	if caOut != "" {
		fmt.Fprintf(stdout, "ca %s\n", caOut)
	}
}

// serveRole serves a role's control handler on controlAddr and its health
// server on healthAddr, each if any, until ctx ends or one of them fails;
// the other is stopped then. It returns the exit code.
func serveRole(ctx context.Context, command string, health *server.Server, healthAddr, controlAddr string, control http.Handler,
	stdout, stderr io.Writer,
) int {
	var endpoints []httpserve.Endpoint
	if health != nil {
		endpoints = append(endpoints, httpserve.Endpoint{Name: "health", Addr: healthAddr, Serve: func(ctx context.Context, ln net.Listener) error {
			return wrap("health server", health.Serve(ctx, ln))
		}})
	}
	if controlAddr != "" {
		endpoints = append(endpoints, httpserve.Endpoint{Name: "control", Addr: controlAddr, Serve: func(ctx context.Context, ln net.Listener) error {
			return wrap("control", httpserve.Serve(ctx, ln, control, httpserve.Options{}))
		}})
	}
	err := httpserve.ServeAll(ctx, endpoints, func(name string, addr net.Addr) { fmt.Fprintf(stdout, "%s http://%s\n", name, addr) })
	return cliflag.ExitCode(stderr, command, err)
}

// writeFile writes data to file atomically, unless file is empty.
func writeFile(file string, data []byte) error {
	if file == "" {
		return nil
	}
	return output.Bytes(file, data)
}

// roleKeys returns a role's own key (--key) and its peer's public key
// (--peer); an error names the flag.
func roleKeys(keyFile, peer, pubOut string) (key, peerPub harness.Key, err error) {
	if peer == "" {
		return key, peerPub, errors.New("flag --peer is required: the peer's public key, in base64 or a file holding it")
	}
	if peerPub, err = harness.ReadKey(peer); err != nil {
		return key, peerPub, fmt.Errorf("invalid value for flag --peer: %w", err)
	}
	if key, err = harness.LoadOrCreateKeyFile(keyFile); err != nil {
		return key, peerPub, fmt.Errorf("invalid value for flag --key: %w", err)
	}
	if err := writeFile(pubOut, []byte(key.Public().String()+"\n")); err != nil {
		return key, peerPub, fmt.Errorf("invalid value for flag --pub-out: %w", err)
	}
	return key, peerPub, nil
}

// registerKeyFlags registers a role's --key, --pub-out and --peer, whose
// public key is the other peer's.
func registerKeyFlags(fs *flag.FlagSet, other string) (keyFile, pubOut, peer *string) {
	keyFile = fs.String("key", "", "private key file (created if missing); empty generates a key")
	pubOut = fs.String("pub-out", "", "write the public key to this file")
	peer = fs.String("peer", "", "the "+other+"'s public key, base64 or a file holding it (required)")
	return keyFile, pubOut, peer
}

func runLabServer(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tunnelprobe lab server", flag.ContinueOnError)
	listen := cliflag.AddrVar(fs, "listen", "127.0.0.1:51820", false, "WireGuard UDP `address`; with --openvpn openvpn's (default 0.0.0.0:1194)")
	keyFile, pubOut, peer := registerKeyFlags(fs, "client")
	caOut := fs.String("ca-out", "", "write the TLS target's CA certificate (PEM) to this file")
	ovpn := fs.String("openvpn", "", "run the real openvpn instead, with the lab's files in this `dir` (written unless there: ca.crt, client.ovpn...)")
	remote := fs.String("remote", "", "with --openvpn: where the client connects, `host[:port]` (client.ovpn's remote; default 127.0.0.1:1194)")
	if code, ok := cliflag.ParseCommand(fs, args, getenv, labUsage, stdout, stderr); !ok {
		return code
	}
	if *ovpn != "" {
		return runOpenVPNServer(ctx, fs, *ovpn, *listen, *remote, stdout, stderr)
	} else if *remote != "" {
		return cliflag.UsageError(stderr, fs.Name(), errors.New("flag --remote is for --openvpn"))
	}
	key, pk, err := roleKeys(*keyFile, *peer, *pubOut)
	if err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	srv := harness.NewServer(harness.ServerConfig{PrivateKey: key, ClientPublicKey: pk, Listen: *listen})
	if err := srv.Start(ctx); err != nil {
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	defer srv.Close()
	if err := writeFile(*caOut, srv.CA().PEM); err != nil {
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	fmt.Fprintf(stdout, "wireguard %s\npublic-key %s\ntls %s (%s)\nsink %s\necho %s\n",
		srv.UDPAddr(), key.Public(), srv.TLSAddr(), harness.TLSHost, srv.SinkAddr(), srv.EchoAddr())
	<-ctx.Done()
	return 0
}

func runLabLink(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tunnelprobe lab link", flag.ContinueOnError)
	lf := registerLinkFlags(fs, "", "")
	listen := cliflag.AddrVar(fs, "listen", "127.0.0.1:51821", false, "UDP `address` the client peer sends to")
	server := fs.String("server", "127.0.0.1:51820", "the server peer's UDP address")
	control := cliflag.AddrVar(fs, "control", "127.0.0.1:8088", true, "HTTP control `address` (GET/PUT /link); empty for none")
	if code, ok := cliflag.ParseCommand(fs, args, getenv, labUsage, stdout, stderr); !ok {
		return code
	}
	srvAddr, err := harness.ResolveUDP(ctx, *server)
	if err != nil {
		return cliflag.UsageError(stderr, fs.Name(), fmt.Errorf("invalid value %q for flag --server: %w", *server, err))
	}
	link := harness.NewLink(harness.LinkConfig{Settings: lf.set, Seed: lf.seed, Listen: *listen, Server: srvAddr})
	if err := link.Start(ctx); err != nil {
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	defer link.Close()
	fmt.Fprintf(stdout, "link %s -> %s (%s)\n", link.Addr(), srvAddr, link.Settings())
	return serveRole(ctx, fs.Name(), nil, "", *control, harness.ControlHandler(link, nil), stdout, stderr)
}

func runLabClient(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tunnelprobe lab client", flag.ContinueOnError)
	listen := cliflag.AddrVar(fs, "listen", "127.0.0.1:0", false, "WireGuard UDP `address`")
	endpoint := fs.String("endpoint", "127.0.0.1:51821", "where to send: the link, or the server peer")
	keyFile, pubOut, peer := registerKeyFlags(fs, "server")
	socks := cliflag.AddrVar(fs, "socks5", "127.0.0.1:1080", true, "SOCKS5 ingress `address`; empty for none")
	control := cliflag.AddrVar(fs, "control", "", true, "HTTP control `address` (POST /restart, GET/PUT /v1/vpn/status); empty for none")
	controlKey := fs.String("control-key", "", "API `key` every control request must carry in X-API-Key, as gluetun's apikey role asks")
	// The health server, the target's CA from the server's --ca-out.
	var health serveflags.Lab
	health.RegisterLab(fs, "the TLS target")
	tlsCA := fs.String("tls-ca", "", "PEM `file` of the TLS target's CA (the server's --ca-out), read again whenever it changes;\n"+
		"required with --serve")
	var tunName string
	fs.Var(cliflag.String(&tunName, cliflag.InterfaceName), "tun", "run on a kernel TUN `device` of this name (CAP_NET_ADMIN, /dev/net/tun) that routes "+
		harness.ServerTunnelAddr.String()+"/24\nfor this network namespace, with no SOCKS5 ingress; excludes --serve: run serve beside it")
	ovpn := fs.String("openvpn", "", "run the real openvpn instead on tun0, with the client.ovpn in this `dir` (lab server --openvpn's); only --control and --control-key besides")
	if code, ok := cliflag.ParseCommand(fs, args, getenv, labUsage, stdout, stderr, serveflags.Exclusive...); !ok {
		return code
	}
	if *ovpn != "" {
		return runOpenVPNClient(ctx, fs, *ovpn, *control, *controlKey, stdout, stderr)
	}
	if err := health.Configure(fs, stderr); err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	if err := checkLabClientFlags(fs, health.Addr, *tlsCA, tunName); err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	} else if tunName != "" {
		*socks = ""
	}
	key, pk, err := roleKeys(*keyFile, *peer, *pubOut)
	if err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	ep, err := harness.ResolveUDP(ctx, *endpoint)
	if err != nil {
		return cliflag.UsageError(stderr, fs.Name(), fmt.Errorf("invalid value %q for flag --endpoint: %w", *endpoint, err))
	}
	cl := harness.NewClient(harness.ClientConfig{PrivateKey: key, ServerPublicKey: pk, Endpoint: ep, Listen: *listen, TUN: tunName})
	if err := cl.Start(ctx); err != nil {
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	defer cl.Close()
	fmt.Fprintf(stdout, "wireguard %s -> %s\npublic-key %s\n", cl.UDPAddr(), ep, key.Public())
	printTUN(stdout, tunName)
	if *socks != "" {
		s, err := harness.ListenSOCKS5(ctx, *socks, cl.DialContext)
		if err != nil {
			return cliflag.ExitCode(stderr, fs.Name(), fmt.Errorf("socks5: %w", err))
		}
		defer s.Close()
		fmt.Fprintf(stdout, "socks5 %s\n", s.Addr())
	}
	srv, err := health.Server(cl.TLSCheck(*tlsCA), cl.Restart, cl)
	if err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	return serveRole(ctx, fs.Name(), srv, health.Addr, *control, harness.ClientControlHandler(cl, *controlKey), stdout, stderr)
}

// printTUN prints the kernel TUN device's index, a new one at each start,
// if the client runs on one.
func printTUN(stdout io.Writer, name string) {
	if name == "" {
		return
	}
	if ifi, err := net.InterfaceByName(name); err == nil {
		fmt.Fprintf(stdout, "tun %s ifindex %d\n", name, ifi.Index)
	}
}

// checkLabClientFlags checks the lab client's flags that go together.
func checkLabClientFlags(fs *flag.FlagSet, serveAddr, tlsCA, tunName string) error {
	switch {
	case serveAddr != "" && tlsCA == "":
		return errors.New("--serve needs --tls-ca, the TLS target's CA file")
	case tunName != "" && serveAddr != "":
		return errors.New("--tun excludes --serve: run tunnelprobe serve in this network namespace")
	case tunName != "" && cliflag.Given(fs)["socks5"]:
		return errors.New("--tun excludes --socks5: programs in this network namespace reach the tunnel by its routes")
	}
	return nil
}

// wrap prefixes a non-nil err with what.
func wrap(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
