package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sync"

	"github.com/tunnelprobe/tunnelprobe/harness"
	"github.com/tunnelprobe/tunnelprobe/internal/cliflag"
)

// The OpenVPN roles of lab server and lab client (--openvpn DIR): the real
// openvpn in this network namespace, as a server and a VPN container run
// it, with the lab's files in DIR, which the two share (a volume).

// openvpnFlags are a role's flags that the OpenVPN role takes: the others
// are WireGuard's, and refused with --openvpn.
var openvpnFlags = map[string][]string{
	"tunnelprobe lab server": {"openvpn", "listen", "remote"},
	"tunnelprobe lab client": {"openvpn", "control", "control-key"},
}

// checkOpenVPNFlags returns a usage error naming the first flag given
// that the OpenVPN role of fs does not take, or what this machine lacks.
func checkOpenVPNFlags(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && !slices.Contains(openvpnFlags[fs.Name()], f.Name) {
			err = fmt.Errorf("flag --%s is not for --openvpn (WireGuard's)", f.Name)
		}
	})
	if err != nil {
		return err
	}
	if err := harness.OpenVPNAvailable(""); err != nil {
		return fmt.Errorf("flag --openvpn: %w", err)
	}
	return nil
}

// runOpenVPNServer runs the OpenVPN server role: the lab's files written
// into dir unless there already (a restarted server keeps its PKI, and
// its clients their configuration), openvpn on listen, the targets on its
// tun0, until ctx ends or openvpn exits.
func runOpenVPNServer(ctx context.Context, fs *flag.FlagSet, dir, listen, remote string, stdout, stderr io.Writer) int {
	if err := checkOpenVPNFlags(fs); err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	if !cliflag.Given(fs)["listen"] {
		listen = fmt.Sprintf("0.0.0.0:%d", harness.OpenVPNPort)
	}
	ap, err := netip.ParseAddrPort(listen)
	if err != nil {
		return cliflag.UsageError(stderr, fs.Name(), fmt.Errorf("invalid value %q for flag --listen: want IP:port with --openvpn: %w", listen, err))
	}
	files := harness.OpenVPNFiles{Dir: dir}
	if files.Exist() {
		fmt.Fprintf(stdout, "files %s (kept)\n", dir)
	} else {
		if files, _, err = harness.WriteOpenVPNFiles(dir, harness.OpenVPNFilesConfig{Listen: ap, Remote: remote}); err != nil {
			return cliflag.UsageError(stderr, fs.Name(), fmt.Errorf("invalid value for flag --openvpn or --remote: %w", err))
		}
		fmt.Fprintf(stdout, "files %s (written)\n", dir)
	}
	srv := harness.NewOpenVPNServer(harness.OpenVPNServerConfig{Files: files})
	if err := srv.Start(ctx); err != nil {
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "openvpn %s\nclient-config %s\nca %s\ntls %s (%s)\nsink %s\n", ap, files.ClientConf(), files.CAFile(),
		netip.AddrPortFrom(harness.ServerTunnelAddr, harness.TLSPort), harness.TLSHost, netip.AddrPortFrom(harness.ServerTunnelAddr, harness.SinkPort))
	select {
	case <-ctx.Done():
		return 0
	case err := <-srv.Exits():
		return cliflag.ExitCode(stderr, fs.Name(), fmt.Errorf("the server's openvpn exited: %w", err))
	}
}

// runOpenVPNClient runs the OpenVPN client role: openvpn with dir's client
// configuration, its control API on control, until ctx ends or openvpn
// exits of its own accord, as a VPN container's process does (1). It
// prints the tun0's index once the first openvpn has connected.
func runOpenVPNClient(ctx context.Context, fs *flag.FlagSet, dir, control, controlKey string, stdout, stderr io.Writer) int {
	if err := checkOpenVPNFlags(fs); err != nil {
		return cliflag.UsageError(stderr, fs.Name(), err)
	}
	files := harness.OpenVPNFiles{Dir: dir}
	if !files.Exist() {
		return cliflag.UsageError(stderr, fs.Name(), fmt.Errorf("invalid value %q for flag --openvpn: no lab files there (lab server --openvpn writes them)", dir))
	}
	cl := harness.NewOpenVPNClient(harness.OpenVPNClientConfig{Conf: files.ClientConf()})
	if err := cl.Start(ctx); err != nil {
		return cliflag.ExitCode(stderr, fs.Name(), err)
	}
	defer cl.Close()
	fmt.Fprintf(stdout, "openvpn %s\n", files.ClientConf())
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(nil); wg.Wait() }()
	wg.Go(func() {
		if cl.Ready(ctx) == nil {
			printTUN(stdout, harness.OpenVPNDevice)
		}
		select {
		case err := <-cl.Exits():
			cancel(err)
		case <-ctx.Done():
		}
	})
	code := serveRole(ctx, fs.Name(), nil, "", control, harness.OpenVPNControlHandler(cl, controlKey), stdout, stderr)
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return cliflag.ExitCode(stderr, fs.Name(), fmt.Errorf("the client's openvpn exited: %w", err))
	}
	return code
}
