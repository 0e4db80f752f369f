// Package cafile reads files of PEM CA certificates into pools for the
// RootCAs of package middleware's checks, the one way the binary and the
// tunnel lab turn a CA file into a pool:
//
//   - [File] reads the file once, as the value of a flag (serve --tls-ca,
//     load --tls-ca): a file that does not parse is a usage error at start;
//   - [Following] reads it at every use and follows its changes, for a CA
//     that is rotated while a check runs: the lab's server peer issues a
//     new CA each time it starts, and the lab's client checks its TLS
//     target with the CA the file holds at each check, and serve's
//     --tls-ca follows its file from what File read at start
//     ([WithRootCAs]), so that a CA rotated under a running sidecar (a
//     mounted secret) never fails its checks for good.
//
// Both fail, naming the file, when no certificate parses, because an empty
// pool would make every check fail with a far less helpful "unknown
// authority". Nothing here starts a goroutine.
package cafile
