package harness

import (
	"cmp"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/internal/pki"
)

// openvpnClientName is the client certificate's common name; the server
// gives that client ClientTunnelAddr (its client-config-dir file).
const openvpnClientName = "client"

// OpenVPNPort is the server's transport port, OpenVPN's own.
const OpenVPNPort = 1194

// OpenVPNFilesConfig is what an OpenVPN lab's files are written from. The
// zero value serves UDP on every address of port 1194, for a client that
// connects to 127.0.0.1.
type OpenVPNFilesConfig struct {
	// Transport is TransportUDP (the default) or TransportTCP.
	Transport string
	// Listen is the server's transport address; default 0.0.0.0:1194.
	Listen netip.AddrPort
	// Remote is where the client connects: "host" or "host:port" (port
	// 1194 if none), an address or a name its resolver knows, such as the
	// lab link's; default 127.0.0.1:1194.
	Remote string
	// MTU is both tunnel devices'; default OpenVPNMTU.
	MTU int
}

// OpenVPNFiles are the files of one OpenVPN lab in Dir, as
// WriteOpenVPNFiles writes them: the server's configuration with its
// certificates, the TLS target's certificate, and the client's whole
// configuration in one inline file, as a provider hands it out.
type OpenVPNFiles struct{ Dir string }

// ServerConf is the server's configuration, which names its other files.
func (f OpenVPNFiles) ServerConf() string { return filepath.Join(f.Dir, "server.conf") }

// ClientConf is the client's configuration, keys and certificates inline.
func (f OpenVPNFiles) ClientConf() string { return filepath.Join(f.Dir, "client.ovpn") }

// CAFile is the lab's CA certificate (PEM): of openvpn's certificates and
// of the TLS target's, for a health check's --tls-ca.
func (f OpenVPNFiles) CAFile() string { return filepath.Join(f.Dir, "ca.crt") }

// TargetCert loads the TLS target's certificate and key.
func (f OpenVPNFiles) TargetCert() (tls.Certificate, error) {
	return tls.LoadX509KeyPair(filepath.Join(f.Dir, "target.crt"), filepath.Join(f.Dir, "target.key"))
}

// Exist reports whether Dir holds the files already (its server
// configuration, the last written).
func (f OpenVPNFiles) Exist() bool { return exists(f.ServerConf()) }

// WriteOpenVPNFiles writes into dir (made if missing) the files of an
// OpenVPN lab with a new CA: the CA's certificate, the server's
// certificate and key, the TLS target's (for TLSHost and ServerTunnelAddr),
// the client's inline configuration and the server's configuration, which
// gives that client ClientTunnelAddr. Key files are readable by their
// owner only.
func WriteOpenVPNFiles(dir string, cfg OpenVPNFilesConfig) (OpenVPNFiles, *CA, error) {
	ca, err := NewCA()
	if err != nil {
		return OpenVPNFiles{}, nil, err
	}
	f, err := writeOpenVPNFiles(dir, ca, cfg)
	return f, ca, err
}

// writeOpenVPNFiles writes the files of WriteOpenVPNFiles with ca.
func writeOpenVPNFiles(dir string, ca *CA, c OpenVPNFilesConfig) (OpenVPNFiles, error) {
	c.Transport = cmp.Or(c.Transport, TransportUDP)
	c.Listen = cmp.Or(c.Listen, netip.AddrPortFrom(netip.IPv4Unspecified(), OpenVPNPort))
	c.MTU = cmp.Or(c.MTU, OpenVPNMTU)
	if c.Transport != TransportUDP && c.Transport != TransportTCP {
		return OpenVPNFiles{}, fmt.Errorf("harness: OpenVPN transport %q: want %s or %s", c.Transport, TransportUDP, TransportTCP)
	}
	host, port, err := openvpnRemote(c.Remote)
	if err != nil {
		return OpenVPNFiles{}, err
	}
	files := map[string][]byte{
		"ca.crt":     ca.PEM,
		"ccd/client": fmt.Appendf(nil, "ifconfig-push %s %s\n", ClientTunnelAddr, netmask(tunnelNet(ClientTunnelAddr))),
	}
	for name, issue := range map[string]func() (tls.Certificate, error){
		"server": func() (tls.Certificate, error) { return ca.Issue("server") },
		"client": func() (tls.Certificate, error) { return ca.IssueClient(openvpnClientName) },
		"target": func() (tls.Certificate, error) { return ca.Issue(TLSHost, ServerTunnelAddr.String()) },
	} {
		cert, err := issue()
		if err != nil {
			return OpenVPNFiles{}, err
		}
		if files[name+".crt"], files[name+".key"], err = pki.PEM(cert); err != nil {
			return OpenVPNFiles{}, err
		}
	}
	files["client.ovpn"] = []byte(openvpnClientConf(c, host, port, files))
	f := OpenVPNFiles{Dir: dir}
	// The server's configuration last: Exist tells a whole set by it.
	for _, name := range append(slices.Sorted(maps.Keys(files)), "server.conf") {
		data := files[name]
		if name == "server.conf" {
			data = []byte(openvpnServerConf(dir, c))
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return OpenVPNFiles{}, err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return OpenVPNFiles{}, err
		}
	}
	return f, nil
}

// openvpnRemote reads a client's remote, "host" or "host:port".
func openvpnRemote(s string) (host, port string, err error) {
	if s == "" {
		return "127.0.0.1", strconv.Itoa(OpenVPNPort), nil
	}
	host, port, err = net.SplitHostPort(s)
	if err != nil && !strings.Contains(s, ":") {
		host, port, err = s, strconv.Itoa(OpenVPNPort), nil
	}
	if err != nil || host == "" || port == "" {
		return "", "", fmt.Errorf("harness: OpenVPN remote %q: want host or host:port", s)
	}
	return host, port, nil
}

// openvpnServerConf is the server's configuration: one client, always at
// ClientTunnelAddr; a client that connects again replaces its old
// session, as a restarted VPN container's does; the keepalive commercial
// servers push (a ping every 10 s, a restart after 60 s of silence).
func openvpnServerConf(dir string, c OpenVPNFilesConfig) string {
	proto := "udp"
	if c.Transport == TransportTCP {
		proto = "tcp-server"
	}
	local := "local " + c.Listen.Addr().String()
	if c.Listen.Addr().IsUnspecified() {
		local = "" // every address of the host, as a container's server
	}
	file := func(name string) string { return filepath.Join(dir, name) }
	return lines(
		"mode server", "tls-server", "dev tun0", "topology subnet",
		fmt.Sprintf("ifconfig %s %s", ServerTunnelAddr, netmask(tunnelNet(ServerTunnelAddr))),
		`push "topology subnet"`,
		"client-config-dir "+file("ccd"), "ccd-exclusive",
		"proto "+proto, local, fmt.Sprintf("port %d", c.Listen.Port()),
		fmt.Sprintf("tun-mtu %d", c.MTU),
		"keepalive 10 60",
		"dh none",
		"ca "+file("ca.crt"), "cert "+file("server.crt"), "key "+file("server.key"),
		"verb 3",
	)
}

// openvpnClientConf is the client's configuration, as a VPN container's
// provider file gives it: one file, its CA, certificate and key inline.
func openvpnClientConf(c OpenVPNFilesConfig, host, port string, files map[string][]byte) string {
	proto := "udp"
	if c.Transport == TransportTCP {
		proto = "tcp-client"
	}
	inline := func(tag, name string) string {
		return "<" + tag + ">\n" + strings.TrimSpace(string(files[name])) + "\n</" + tag + ">"
	}
	return lines(
		"client", "dev tun0", "nobind", "proto "+proto,
		"remote "+host+" "+port,
		fmt.Sprintf("tun-mtu %d", c.MTU),
		// A restart after a lost connection retries at once, then every
		// second: the lab's restarts measure the tunnel, not a back-off.
		"connect-retry 1 1",
		"remote-cert-tls server",
		"verb 3",
		inline("ca", "ca.crt"), inline("cert", "client.crt"), inline("key", "client.key"),
	)
}

// lines joins the non-empty lines l into a file's text.
func lines(l ...string) string {
	return strings.Join(slices.DeleteFunc(l, func(s string) bool { return s == "" }), "\n") + "\n"
}

// netmask is p's mask in dotted form, as openvpn takes it (IPv4 only).
func netmask(p netip.Prefix) string { return net.IP(net.CIDRMask(p.Bits(), 32)).String() }
