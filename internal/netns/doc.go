// Package netns gives the lab network namespaces of its own and runs code
// in them: the kernel devices, sockets and processes (the real openvpn) of
// a kernel tunnel stay off the host's network and out of each other's way.
//
// A namespace here has no name and no bind mount: it lives as long as its
// handle or a process in it, so a lab that is killed leaves none behind,
// not even on SIGKILL. Linux only (root, or CAP_SYS_ADMIN and
// CAP_NET_ADMIN); elsewhere New fails.
package netns
