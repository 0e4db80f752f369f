package loadgen

import (
	"bytes"
	"io"
	"os"
	"strconv"
)

// procFiles reads the process's CPU time, RSS, threads and descriptors and
// the machine's TCP counters from /proc files it opens once, when a run
// starts, and reads again each second with pread. gopsutil opens each file
// anew at every reading, and so reads nothing exactly when a run has used
// up its descriptors; these three stay open. Sockets are never listed
// (gopsutil's net.Connections took half a second at 18,000 of them). Where
// a file cannot be opened (no /proc), its readings are zero. A procFiles is
// used by one goroutine at a time.
type procFiles struct {
	stat, snmp, fdDir *os.File
	buf, dirBuf       []byte
}

// Linux reports CPU times in clock ticks of 1/100 s (USER_HZ) and RSS in
// pages.
const clockTicks = 100

var pageSize = int64(os.Getpagesize())

func openProcFiles() *procFiles {
	open := func(name string) *os.File {
		f, err := os.Open(name)
		if err != nil {
			return nil
		}
		return f
	}
	return &procFiles{
		stat:   open("/proc/self/stat"),
		snmp:   open("/proc/net/snmp"),
		fdDir:  open("/proc/self/fd"),
		buf:    make([]byte, 0, 4096),
		dirBuf: make([]byte, 32<<10),
	}
}

func (p *procFiles) close() {
	for _, f := range []*os.File{p.stat, p.snmp, p.fdDir} {
		if f != nil {
			f.Close()
		}
	}
}

// readAll reads f from its start into p.buf.
func (p *procFiles) readAll(f *os.File) []byte {
	if f == nil {
		return nil
	}
	b := p.buf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.ReadAt(b[len(b):cap(b)], int64(len(b)))
		b = b[:len(b)+n]
		if err == io.EOF || (err == nil && n == 0) {
			break
		}
		if err != nil {
			return nil
		}
	}
	p.buf = b
	return b
}

// read reads the process.
func (p *procFiles) read() procReading {
	var r procReading
	// The fields after the command's closing parenthesis, from field 3
	// (state): utime is field 14, stime 15, num_threads 20, rss 24.
	if b := p.readAll(p.stat); b != nil {
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			f := bytes.Fields(b[i+1:])
			field := func(n int) int64 {
				if n-3 >= len(f) {
					return 0
				}
				v, _ := strconv.ParseInt(string(f[n-3]), 10, 64)
				return v
			}
			r.cpu = float64(field(14)+field(15)) / clockTicks
			r.threads = field(20)
			r.rss = field(24) * pageSize
		}
	}
	if p.fdDir != nil {
		r.fds = p.countFDs()
	}
	return r
}

// tcp reads the machine's TCP counters. Of the resets it takes
// EstabResets, connections reset from ESTABLISHED or CLOSE-WAIT, rather than
// OutRsts, which also counts the answer to every SYN for a closed port
// (every refused dial). Every run's connections end with a reset on purpose
// (see package sink), which EstabResets counts too.
func (p *procFiles) tcp() tcpCounters {
	// Two lines start with "Tcp:": the names, then the values.
	var names, values [][]byte
	for line := range bytes.SplitSeq(p.readAll(p.snmp), []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("Tcp:")); ok {
			if names == nil {
				names = bytes.Fields(rest)
			} else {
				values = bytes.Fields(rest)
			}
		}
	}
	if names == nil || len(names) != len(values) {
		return tcpCounters{}
	}
	t := tcpCounters{ok: true}
	for i, n := range names {
		v, _ := strconv.ParseInt(string(values[i]), 10, 64)
		switch string(n) {
		case "RetransSegs":
			t.retrans = v
		case "EstabResets":
			t.estResets = v
		}
	}
	return t
}
