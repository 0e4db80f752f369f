package middleware

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// InterfaceCounters returns the counters of the network interface name
// (WireGuard's wg0, OpenVPN's tun0, any other), read from the kernel's
// per-interface statistics of the network namespace the process runs in
// (/proc/thread-self/net/dev): a sidecar that shares the VPN container's
// network namespace sees its tunnel. Linux only; elsewhere, and for a name
// that is no interface there, ReadCounters fails.
func InterfaceCounters(name string) CounterSource {
	return interfaceCounters{file: "/proc/thread-self/net/dev", name: name}
}

type interfaceCounters struct{ file, name string }

func (s interfaceCounters) ReadCounters() (Counters, error) {
	data, err := os.ReadFile(s.file)
	if err != nil {
		return Counters{}, fmt.Errorf("interface %s counters: %w", s.name, err)
	}
	c, err := parseNetDev(data, s.name)
	if err != nil {
		return Counters{}, fmt.Errorf("interface %s counters: %w", s.name, err)
	}
	return c, nil
}

// parseNetDev reads the line of interface name in the format of
// /proc/net/dev: "name: rx_bytes rx_packets errs drop fifo frame compressed
// multicast tx_bytes tx_packets ...".
func parseNetDev(data []byte, name string) (Counters, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		iface, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(iface) != name {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 10 {
			return Counters{}, fmt.Errorf("short line %q", sc.Text())
		}
		var v [4]uint64
		var err error
		for i, col := range []int{0, 1, 8, 9} {
			if v[i], err = strconv.ParseUint(f[col], 10, 64); err != nil {
				return Counters{}, fmt.Errorf("field %d of %q: %w", col+1, sc.Text(), err)
			}
		}
		return Counters{RxBytes: v[0], RxPackets: v[1], TxBytes: v[2], TxPackets: v[3]}, nil
	}
	return Counters{}, fmt.Errorf("no interface %q in this network namespace", name)
}
