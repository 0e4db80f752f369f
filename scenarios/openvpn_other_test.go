//go:build !linux

package scenarios

// openvpnRuns are TestLoadedRuns' runs through the real openvpn, which
// runs in network namespaces of Linux's.
var openvpnRuns []loadedRun
