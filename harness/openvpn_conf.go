package harness

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/internal/pki"
)

// openvpnClientName is the client certificate's common name; the server
// gives that client ClientTunnelAddr (its client-config-dir file).
const openvpnClientName = "client"

// openvpnPort is the server's transport port, OpenVPN's own.
const openvpnPort = 1194

// openvpnConfig is what both ends' configurations are written from.
type openvpnConfig struct {
	transport string         // "udp" or "tcp"
	listen    netip.AddrPort // the server's transport address
	remote    netip.AddrPort // where the client connects: the link, or the carrier
	mtu       int            // the tunnel devices' MTU
}

// writeOpenVPNFiles writes, into dir, the PKI of one lab (the lab's CA, a
// server and a client certificate it issues) and both ends' configurations,
// and returns the server's and the client's configuration files.
func writeOpenVPNFiles(dir string, ca *CA, c openvpnConfig) (server, client string, err error) {
	files := map[string][]byte{
		"ca.crt":      ca.PEM,
		"ccd/client":  fmt.Appendf(nil, "ifconfig-push %s %s\n", ClientTunnelAddr, netmask(tunnelNet(ClientTunnelAddr))),
		"server.conf": []byte(openvpnServerConf(dir, c)),
		"client.conf": []byte(openvpnClientConf(dir, c)),
	}
	for name, issue := range map[string]func() (tls.Certificate, error){
		"server": func() (tls.Certificate, error) { return ca.Issue("server") },
		"client": func() (tls.Certificate, error) { return ca.IssueClient(openvpnClientName) },
	} {
		cert, err := issue()
		if err != nil {
			return "", "", err
		}
		if files[name+".crt"], files[name+".key"], err = pki.PEM(cert); err != nil {
			return "", "", err
		}
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return "", "", err
		}
	}
	return filepath.Join(dir, "server.conf"), filepath.Join(dir, "client.conf"), nil
}

// openvpnServerConf is the server's configuration: one client, always at
// ClientTunnelAddr; a client that connects again replaces its old
// session, as a restarted VPN container's does; the keepalive commercial
// servers push (a ping every 10 s, a restart after 60 s of silence).
func openvpnServerConf(dir string, c openvpnConfig) string {
	proto := "udp"
	if c.transport == "tcp" {
		proto = "tcp-server"
	}
	return lines(
		"mode server", "tls-server", "dev tun0", "topology subnet",
		fmt.Sprintf("ifconfig %s %s", ServerTunnelAddr, netmask(tunnelNet(ServerTunnelAddr))),
		`push "topology subnet"`,
		"client-config-dir "+filepath.Join(dir, "ccd"), "ccd-exclusive",
		"proto "+proto, fmt.Sprintf("local %s", c.listen.Addr()), fmt.Sprintf("port %d", c.listen.Port()),
		fmt.Sprintf("tun-mtu %d", c.mtu),
		"keepalive 10 60",
		"dh none",
		pkiLines(dir, "server"),
		"verb 3",
	)
}

// openvpnClientConf is the client's configuration, as a VPN container's
// provider file gives it.
func openvpnClientConf(dir string, c openvpnConfig) string {
	proto := "udp"
	if c.transport == "tcp" {
		proto = "tcp-client"
	}
	return lines(
		"client", "dev tun0", "nobind", "proto "+proto,
		fmt.Sprintf("remote %s %d", c.remote.Addr(), c.remote.Port()),
		fmt.Sprintf("tun-mtu %d", c.mtu),
		// A restart after a lost connection retries at once, then every
		// second: the lab's restarts measure the tunnel, not a back-off.
		"connect-retry 1 1",
		"remote-cert-tls server",
		pkiLines(dir, "client"),
		"verb 3",
	)
}

func pkiLines(dir, name string) string {
	return lines("ca "+filepath.Join(dir, "ca.crt"), "cert "+filepath.Join(dir, name+".crt"), "key "+filepath.Join(dir, name+".key"))
}

func lines(l ...string) string { return strings.Join(l, "\n") + "\n" }

// netmask is p's mask in dotted form, as openvpn takes it (IPv4 only).
func netmask(p netip.Prefix) string { return net.IP(net.CIDRMask(p.Bits(), 32)).String() }
