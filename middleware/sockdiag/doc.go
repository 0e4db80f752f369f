// Package sockdiag reads the delivery of a tunnel's users' TCP connections
// from the kernel's socket table, through netlink sock_diag (INET_DIAG with
// tcp_info), for middleware.Evidence.Delivery: how much of what each socket
// whose local address is one of the tunnel interface's sent the far end has
// acknowledged. Inside the network namespace the tunnel's interface is in
// (a VPN container's, which a sidecar shares) it needs no privilege.
//
// What counts: TCP sockets of IPv4 and IPv6 with a local address of the
// interface, keyed by their socket cookie, valued by tcpi_delivered (the
// segments delivered, SACKed ones included, so it moves under loss) plus
// tcpi_bytes_acked (the bytes cumulatively acknowledged). Both advance only
// when the far end received the data and its acknowledgement came back.
// Left out, since they prove nothing about the tunnel: loopback and every
// other interface's sockets (the pod IP's own: kubelet probes, scrapes;
// the VPN's own transport), and what a socket received, which a far side
// that cannot hear us still sends.
//
// Nothing here starts a goroutine or keeps a socket open between readings.
package sockdiag
