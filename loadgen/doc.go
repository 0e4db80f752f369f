// Package loadgen is the load generator: it holds thousands of TCP
// connections to a sink through a path (the host network, the tunnel
// lab's netstack, a SOCKS5 proxy), carries paced or greedy traffic on
// them, and measures how a health check run over the same path degrades.
// It answers: how many connections and how much traffic can a tunnel carry
// before its health check starts failing?
//
// # A run
//
// [Run] takes a [Config] and returns a [Result]:
//
//  1. Ramp: slot i of cfg.Conns dials at start + i/ConnectRate (or
//     i*Ramp/Conns; all at once when neither is set), at most
//     [MaxDialsInFlight] dials at a time. The ramp ends when every slot's
//     first dial has ended. While it is behind its schedule (a dial more
//     than 10 ms late, MaxDialsInFlight first dials pending, or the last
//     dial started and the first dials still ending; all along when as
//     fast as possible), greedy connections park before their sink
//     header, their next read or their next write, so that the dials get
//     the CPU; as fast as possible, a connection's goroutine is not even
//     started until the ramp has ended.
//  2. Hold: for cfg.Duration, every connection carries its share of
//     cfg.Rate in cfg.Direction, or as much as it can when Rate is 0. A
//     connection that breaks is a disruption, and is redialled with
//     exponential back-off unless NoReconnect is set. The probe, if any,
//     runs every ProbeEvery from the start of the ramp to the end.
//  3. Stop: every connection ends with the sink's handshake (see package
//     [github.com/tunnelprobe/tunnelprobe/loadgen/sink]), after which both
//     ends' byte counts agree exactly and no TIME_WAIT entry is left. The
//     handshake must read what is still in flight; it gets 5 s (1 s when
//     ctx ended the run), after which the connection is reset and the
//     counts differ by what was lost with it. Thousands of greedy
//     loopback connections can push the kernel into TCP memory pressure,
//     where a few connections crawl and miss that bound.
//
// The payload is paced per connection on an open-model schedule computed
// from the connection's start and rate: a sender that falls behind (a
// write blocked by a full path) owes the bytes that fell due and sends
// them as soon as it can, so the offered load does not quietly shrink
// when the path slows down (no coordinated omission). In Down and Both
// the sink paces what it sends the same way, at the rate in each
// connection's header.
//
// # Measurements
//
// Counters cover the whole run, ramp and stop included. BytesUp counts
// bytes that Write accepted, BytesDown bytes read; headers are not payload.
// Connect latency is the dial's own (not the wait for a free dialer). Probe
// latency is that of successful probes; failures are counted, not timed.
// The series has one [Second] per wall-clock second, the first and the
// last partial, and adds up to the totals; Open is counted by the run
// itself, never by listing sockets. Process readings (CPU, RSS,
// descriptors, threads) and the machine's TCP counters are read from /proc
// each second, through files opened once so that they are still read when
// the run has used up its descriptors: TCPRetransmits is RetransSegs and TCPResets is EstabResets
// (connections reset while established; our own resets at the stop count
// too). Failed dials and broken connections
// are classified by [Classify].
//
// # Concurrency and ownership
//
// Run owns every goroutine it starts and waits for all of them before it
// returns: one per open connection, or per slot redialling after a failed
// first dial (two per connection in Both), the
// dialers (at most MaxDialsInFlight), the probe loop with at most one
// probe in flight, and the sampler that calls cfg.OnSecond. It owns every
// connection it dials and closes them all, with a reset, before it
// returns. When ctx ends, Run stops within about
// a second and returns the figures so far with Interrupted set. The
// caller owns cfg.Dialer and cfg.Probe, which must honour their contexts;
// Run never closes them.
//
// A process has at most 20,000 descriptors: about 19,000 connections, or
// half as many with the sink in the same process. Larger runs use several
// processes: a [Fleet] splits a run described as data ([ChildConfig]) over
// child processes of a program that calls [RunChild], starts them at the
// same instant and [Merge]s their results exactly; cfg.Sources multiplies
// the ephemeral ports towards one sink.
//
// # Sweeps
//
// A [Sweep] runs the same run at several counts of connections, one level
// after the other, each in this process or over a Fleet, and stops after
// a level that failed or that ctx ended. Its callbacks show each level
// as it starts, each second and each level's end; [CheckOpened] tells a
// sweep that opened no connection at all, and
// [Sweep.DescriptorShortfall] one that asks a process for more
// connections than it may open descriptors.
package loadgen
