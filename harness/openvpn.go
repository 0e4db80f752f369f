package harness

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/netns"
)

// The transports of an OpenVPN tunnel.
const (
	TransportUDP = "udp"
	TransportTCP = "tcp"
)

// OpenVPNDevice is the tunnel device of both ends of an OpenVPN lab, as a
// VPN container names it.
const OpenVPNDevice = "tun0"

// labDirPattern names the folders OpenVPN labs make in the temporary
// directory (as os.MkdirTemp names them): see labDir.
const labDirPattern = "tunnelprobe-openvpn-"

// OpenVPNMTU is the OpenVPN tunnel's MTU: openvpn's default tun-mtu.
const OpenVPNMTU = 1500

// OpenVPNConfig configures an OpenVPN lab. The zero value is a working lab
// over UDP on an unlimited link.
type OpenVPNConfig struct {
	// Link holds the link's initial settings; Seed seeds its random loss.
	Link Settings
	Seed uint64
	// Transport is TransportUDP (the default) or TransportTCP.
	Transport string
	// Binary is the openvpn program; default "openvpn", found in PATH.
	Binary string
	// StartTimeout bounds how long each end may take to bring its tunnel
	// up at Start; default 30s.
	StartTimeout time.Duration
}

// ErrOpenVPNUnavailable is wrapped by the error of an OpenVPN lab that this
// machine cannot run; the error names what is missing.
var ErrOpenVPNUnavailable = errors.New("an OpenVPN lab cannot run here")

// OpenVPNAvailable reports what this machine lacks to run an OpenVPN lab
// with the program binary ("" for openvpn): nil, or an error wrapping
// ErrOpenVPNUnavailable that names it.
func OpenVPNAvailable(binary string) error {
	binary = cmp.Or(binary, "openvpn")
	switch {
	case os.Geteuid() != 0:
		return fmt.Errorf("%w: it needs root (network namespaces and TUN devices)", ErrOpenVPNUnavailable)
	case !exists("/dev/net/tun"):
		return fmt.Errorf("%w: no /dev/net/tun (a container needs --device /dev/net/tun)", ErrOpenVPNUnavailable)
	}
	if _, err := exec.LookPath(binary); err != nil {
		// Debian installs it in /usr/sbin, which the PATH of a non-login
		// root shell or a CI job may lack.
		return fmt.Errorf("%w: no %s program in PATH (Debian: apt-get install openvpn, which puts it in /usr/sbin): %v",
			ErrOpenVPNUnavailable, binary, err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// OpenVPN is the tunnel lab with the real openvpn (Debian's 2.6) at both
// ends, each on a kernel TUN device (OpenVPNDevice) in a network namespace
// the lab creates: the server's namespace holds the lab's targets (the
// same services as the WireGuard Server's, on kernel sockets, and the
// kernel's ICMP echo answers), the client's is the VPN container's, where
// checks, probes and loads dial from, bound to its tun0. The encrypted
// transport crosses the shaped Link: over UDP, the link relays openvpn's
// datagrams in the client's namespace, between its loopback and a veth
// pair to the server's; over TCP, a carrier (tcpCarrier) takes the one TCP
// connection across the link. Restarts stop and start the client's
// openvpn process, as the VPN container's loop does; its tun0 is then a
// new device, which everything here finds again by name.
//
// Start and Close must not run concurrently with each other; every other
// method is safe for concurrent use.
type OpenVPN struct {
	cfg    OpenVPNConfig
	dir    *labDir
	ca     *CA
	client *netns.NS
	server *netns.NS
	link   *Link
	tcp    *tcpCarrier
	srv    *OpenVPNServer // the server's openvpn and targets, in server
	cl     *OpenVPNClient // the client's openvpn, in client
}

var _ Tunnel = (*OpenVPN)(nil)

// NewOpenVPN returns an OpenVPN lab; it starts nothing until Start.
func NewOpenVPN(cfg OpenVPNConfig) *OpenVPN {
	cfg.Transport = cmp.Or(cfg.Transport, TransportUDP)
	cfg.Binary = cmp.Or(cfg.Binary, "openvpn")
	cfg.StartTimeout = cmp.Or(cfg.StartTimeout, 30*time.Second)
	return &OpenVPN{
		cfg: cfg,
		srv: NewOpenVPNServer(OpenVPNServerConfig{Binary: cfg.Binary, StartTimeout: cfg.StartTimeout}),
		cl:  NewOpenVPNClient(OpenVPNClientConfig{Binary: cfg.Binary}),
	}
}
