package prober

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// A KubeletVersion is the Kubernetes release 1.<minor> whose kubelet a
// [Kubelet] imitates, named by its minor number: KubeletVersion(37) is 1.37.
// The zero value stands for [DefaultKubeletVersion]. As text (flags, JSON,
// YAML) it reads and writes "1.37".
//
// The versions modelled, [OldestKubeletVersion] to [DefaultKubeletVersion],
// probe alike but for two things (Kubernetes source: pkg/probe/http/request.go,
// pkg/probe/dialer_others.go):
//
//   - An httpGet probe's User-Agent is kube-probe/1.<minor>: the kubelet
//     builds it from its own version.
//   - From 1.27 on, the socket of an httpGet or tcpSocket probe lingers 1 s
//     on close (SO_LINGER, kubernetes#115143), which the kubelet sets so that
//     its many short probe connections do not hold sockets, ports and
//     conntrack entries in TIME-WAIT for a minute. A version stands for its
//     first release: the patch releases 1.23.17 and 1.24.11 took the linger
//     too; name 1.27 to have it.
//
// The rest holds for every modelled version: Accept */* and compression off
// came in 1.20 (kubernetes#95641, #96127), as did the exec probe's timeout
// (#94115) and the HTTP/2 connection health check (#95981); HTTP/2 over
// TLS, TLS not verified, proxies ignored, redirects to the same host only
// and the 10 KiB body cap are older.
type KubeletVersion int

const (
	// OldestKubeletVersion is the oldest version modelled, 1.20: before it,
	// httpGet probes asked for compressed bodies and exec probes had no
	// timeout.
	OldestKubeletVersion KubeletVersion = 20
	// DefaultKubeletVersion is the newest version modelled, 1.37.
	DefaultKubeletVersion KubeletVersion = 37
)

// lingerSince is the first version whose probe sockets linger 1 s.
const lingerSince KubeletVersion = 27

func (v KubeletVersion) orDefault() KubeletVersion {
	if v == 0 {
		return DefaultKubeletVersion
	}
	return v
}

// String returns v as "1.<minor>"; the zero value reads as the default.
func (v KubeletVersion) String() string { return "1." + strconv.Itoa(int(v.orDefault())) }

// Check returns an error unless v is zero or a version modelled; it names
// the versions that are.
func (v KubeletVersion) Check() error {
	if v != 0 && (v < OldestKubeletVersion || v > DefaultKubeletVersion) {
		return fmt.Errorf("kubelet version 1.%d is not modelled: want %v to %v", int(v), OldestKubeletVersion, DefaultKubeletVersion)
	}
	return nil
}

// MarshalText returns v.String().
func (v KubeletVersion) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads "1.<minor>" or "v1.<minor>" of a version modelled.
func (v *KubeletVersion) UnmarshalText(text []byte) error {
	s := strings.TrimPrefix(string(text), "v")
	minor, err := strconv.Atoi(strings.TrimPrefix(s, "1."))
	parsed := KubeletVersion(minor)
	if err != nil || !strings.HasPrefix(s, "1.") || parsed.String() != s || parsed == 0 {
		return fmt.Errorf("kubelet version %q: want %v to %v", text, OldestKubeletVersion, DefaultKubeletVersion)
	}
	if err := parsed.Check(); err != nil {
		return err
	}
	*v = parsed
	return nil
}

// UnmarshalJSON reads a JSON string as UnmarshalText does. It refuses a
// number, which cannot say 1.30: YAML's 1.30, unquoted, arrives as 1.3.
func (v *KubeletVersion) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("kubelet version %s: want a string such as \"1.30\" (a number drops the 0 of 1.30), %v to %v", b, OldestKubeletVersion, DefaultKubeletVersion)
	}
	return v.UnmarshalText([]byte(s))
}

// UserAgent returns the User-Agent of v's httpGet probes, kube-probe/1.<minor>.
func (v KubeletVersion) UserAgent() string { return "kube-probe/" + v.String() }

// dialer returns the host network's dialer for v's httpGet and tcpSocket
// probes: from 1.27 on it sets SO_LINGER to 1 s, as the kubelet's
// ProbeDialer does.
func (v KubeletVersion) dialer() *net.Dialer {
	if v.orDefault() < lingerSince {
		return &net.Dialer{}
	}
	return &net.Dialer{Control: lingerOneSecond}
}

// lingerOneSecond sets SO_LINGER to one second, as the kubelet's
// ProbeDialer does.
func lingerOneSecond(_, _ string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		_ = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 1})
	})
}
