package loadgen

import (
	"os"
	"sync"

	"github.com/shirou/gopsutil/v4/net"
	"github.com/shirou/gopsutil/v4/process"
)

// self is this process, for gopsutil; nil where it cannot be had, and the
// readings are then zero. A Process caches what it reads and is not safe
// for concurrent use, while several Runs may sample at once: selfMu
// serialises them.
var (
	self, _ = process.NewProcess(int32(os.Getpid()))
	selfMu  sync.Mutex
)

// readProc reads the process's CPU time, RSS, open descriptors and threads
// with gopsutil: each is a read of /proc/self, well under a millisecond
// except NumFDs, which lists the descriptors (about 20 ms at 18,000). It
// never lists sockets (net.Connections took half a second at that size).
func readProc() procReading {
	var p procReading
	if self == nil {
		return p
	}
	selfMu.Lock()
	defer selfMu.Unlock()
	if t, err := self.Times(); err == nil {
		p.cpu = t.User + t.System
	}
	if m, err := self.MemoryInfo(); err == nil {
		p.rss = int64(m.RSS)
	}
	if n, err := self.NumFDs(); err == nil {
		p.fds = int64(n)
	}
	if n, err := self.NumThreads(); err == nil {
		p.threads = int64(n)
	}
	return p
}

// readTCP reads the machine's TCP counters. Of the resets it takes
// EstabResets, connections reset from ESTABLISHED or CLOSE-WAIT, rather than
// OutRsts, which also counts the answer to every SYN for a closed port
// (every refused dial). Every run's connections end with a reset on purpose
// (see package sink), which EstabResets counts too.
func readTCP() tcpCounters {
	stats, err := net.ProtoCounters([]string{"tcp"})
	if err != nil || len(stats) == 0 {
		return tcpCounters{}
	}
	s := stats[0].Stats
	return tcpCounters{ok: true, retrans: s["RetransSegs"], estResets: s["EstabResets"]}
}
