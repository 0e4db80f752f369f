// Package sink is the load generator's peer: a TCP server that discards,
// sends or echoes bytes and counts them, so that a load run's byte counts
// can be checked against the far end.
//
// # Protocol
//
// A client MAY open with a 16-byte header:
//
//	offset size  field
//	0      4     magic "TPSK"
//	4      1     version, 1
//	5      1     mode: 'u' upload, 'd' download, 'b' both, 'e' echo
//	6      2     reserved, zero
//	8      8     rate the sink sends at, bytes per second, big-endian;
//	             0 means as fast as the connection takes it
//
// In mode 'u' the sink reads and discards everything. In 'd' it sends at
// the rate and reads and discards whatever the client sends. In 'b' it does
// both at once. In 'e' it writes back what it reads. [WriteHeader] writes a
// header.
//
// A client that does not start with the magic (curl, iperf-like tools, a
// health check's bare dial) gets the server's default: discard, or echo
// when [Server].Echo is set. Its first bytes are data like the rest. The
// sink tells the two apart without a read deadline: it stops waiting for
// the magic at the first byte that differs from it, so a client that sends
// "hi" and waits for the echo is answered at once.
//
// Headers are not payload: [Stats] counts only the bytes after them.
//
// # Ending a connection
//
// A header client ends a connection by half-closing it (shutdown for
// writing, which sends FIN after everything it wrote). The sink reads to
// that end, so it has counted every byte the client wrote; it stops
// sending, waits until the client has acknowledged everything it sent
// (on Linux; at most 10 s) and then resets the connection
// (SO_LINGER 0). A client that reads until the reset has therefore
// received, and can count, everything the sink counted as sent, and neither
// side is left with a TIME_WAIT entry, which matters to a load generator
// that opens tens of thousands of connections run after run. A client
// without a header gets an ordinary close instead. A client that vanished
// without a word (a restarted VPN client's connections) is ended by
// [Server.Expire].
//
// # Concurrency
//
// [Server.Serve] blocks; it starts one goroutine per connection (two in
// modes 'd' and 'b') and, before it returns, closes its listener and every
// connection it accepted and waits for all of those goroutines, and for
// the end of every drain: an upload on a [Drainer] (a netstack's
// connection, as a lab's) is drained by the connection's own
// notifications once its header is read, and holds no goroutine. A
// [Server] may serve several listeners, one Serve call each, and its
// counters are safe to read at any time. [ListenReusePort] lets several
// processes share one port, for more connections than one process has
// file descriptors: a [Group] runs such child processes beside its own
// Server, each a program that calls [RunChild] (tunnelprobe sink --procs
// runs itself that way), tells them their settings as data on their stdin
// and adds up the counters they report. [Group.Run] blocks until its
// context ends or a process fails, and returns once every child has exited;
// [Group.RunServingStats] also serves the group's totals over HTTP while
// it runs, and closes the listener it was given.
package sink
