// Package netnstest gives tests network namespaces of their own, made with
// the ip command and deleted when the test ends, and runs code inside them:
// the kernel devices and sockets a test needs stay off the host's network.
// Where namespaces cannot be made (not Linux, not root, no ip command) a
// test skips, or fails when TUNNELPROBE_REQUIRE_DOCKER=1, as in CI.
package netnstest
