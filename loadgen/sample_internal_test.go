package loadgen

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestLateSamplerSharesTheCountsOutOverTheSecondsItMissed(t *testing.T) {
	start := time.Unix(1000, 0)
	s := &sampler{c: newCounters(), proc: &procFiles{}, nextT: 1000,
		last: reading{at: start, tcp: tcpCounters{ok: true}}}
	// Woken 3.5 s after the second began (2.5 s late), with 3,500 bytes
	// sent evenly meanwhile.
	now := reading{at: start.Add(3500 * time.Millisecond), snap: snapshot{bytesUp: 3500, open: 7, connects: 35},
		proc: procReading{cpu: 3.5, rss: 1 << 20}, tcp: tcpCounters{ok: true, retrans: 350}}
	s.closeUntil(now, true)
	if len(s.series) != 3 {
		t.Fatalf("%d seconds closed, want the 3 that ended", len(s.series))
	}
	for i, sec := range s.series {
		if sec.T != 1000+int64(i) || sec.BytesUp != 1000 || sec.Connects != 10 || sec.TCPRetransmits != 100 ||
			sec.CPUSeconds != 1 || sec.Open != 7 || sec.RSSBytes != 1<<20 {
			t.Errorf("second %d: %+v, want a third of the counts and the gauges of the reading", i, sec)
		}
	}
	// The half second since the last boundary stays with the one being
	// measured, so that the series adds up to the totals.
	final := s.close(reading{at: start.Add(3900 * time.Millisecond), snap: snapshot{bytesUp: 3900}}, probeTally{})
	if final.T != 1003 || final.BytesUp != 900 {
		t.Errorf("the partial second: %+v, want second 1003 with 900 bytes", final)
	}
}

func TestSamplerOnTimeClosesOneSecond(t *testing.T) {
	start := time.Unix(1000, 0)
	s := &sampler{c: newCounters(), proc: &procFiles{}, nextT: 1000, last: reading{at: start}}
	// A wall clock a hair behind the timer: the second closes on the
	// reading as it is.
	s.closeUntil(reading{at: start.Add(999 * time.Millisecond), snap: snapshot{bytesUp: 10}}, true)
	if len(s.series) != 1 || s.series[0].BytesUp != 10 {
		t.Errorf("series %+v, want one second of 10 bytes", s.series)
	}
}

func TestProcFilesReadWithNoDescriptorLeft(t *testing.T) {
	p := openProcFiles()
	defer p.close()
	if p.stat == nil || p.fdDir == nil {
		t.Skip("no /proc")
	}
	// The limit caps descriptor numbers: at the lowest free one, no file
	// can be opened.
	probe, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	lowestFree := probe.Fd()
	probe.Close()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	full := lim
	full.Cur = uint64(lowestFree) // every descriptor taken, as at EMFILE
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &full); err != nil {
		t.Skip(err)
	}
	f, openErr := os.Open("/proc/self/stat")
	r, tcp := p.read(), p.tcp()
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if openErr == nil {
		f.Close()
		t.Fatal("a file could still be opened: the test proves nothing")
	}
	if r.rss <= 0 || r.fds <= 0 || r.threads <= 0 {
		t.Errorf("reading with no descriptor left: %+v, want every gauge", r)
	}
	if p.snmp != nil && !tcp.ok {
		t.Error("TCP counters unread with no descriptor left")
	}
}

func TestProcFilesCountDescriptors(t *testing.T) {
	p := openProcFiles()
	defer p.close()
	if p.fdDir == nil {
		t.Skip("no /proc")
	}
	before := p.read().fds
	var files []*os.File
	for range 50 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	after := p.read().fds
	for _, f := range files {
		f.Close()
	}
	if after-before != 50 {
		t.Errorf("%d descriptors, then %d after opening 50 files", before, after)
	}
}

func TestProbeCountAndLatencyFallInTheSameSecond(t *testing.T) {
	c := newCounters()
	start := time.Unix(1000, 0)
	s := &sampler{c: c, proc: &procFiles{}, nextT: 1000, last: reading{at: start}}
	readAt := func(d time.Duration) reading { return reading{at: start.Add(d), snap: c.snapshot()} }

	// The run's slowest probe ends after the sampler read the counters at
	// the end of second 1000, but before it closed that second (reading
	// /proc under load takes a while).
	endOf1000 := readAt(1001 * time.Millisecond)
	const slowest = 1300 * time.Millisecond
	c.probed(slowest, nil)
	s.closeUntil(endOf1000, true)
	// Then a late wake-up closes seconds 1001 to 1003 at once, after a
	// probe that failed and one that passed.
	c.probed(10*time.Second, errors.New("timeout"))
	c.probed(300*time.Millisecond, nil)
	s.closeUntil(readAt(4500*time.Millisecond), true)

	// The plot and the progress lines show a second's latency only when a
	// probe passed in it: a latency without its count is not shown, a
	// count without its latency shows as 0 ms.
	var probes, failures int64
	var slowestShown float64
	for _, sec := range s.series {
		probes += sec.Probes
		failures += sec.ProbeFailures
		passed := sec.Probes > sec.ProbeFailures
		if passed != (sec.ProbeMaxMS > 0) {
			t.Errorf("second %d: %d probes, %d failed, slowest %v ms: a probe's count and latency belong together",
				sec.T, sec.Probes, sec.ProbeFailures, sec.ProbeMaxMS)
		}
		if passed {
			slowestShown = max(slowestShown, sec.ProbeMaxMS)
		}
	}
	if probes != 3 || failures != 1 {
		t.Errorf("the series has %d probes, %d failed; want all 3, 1 failed", probes, failures)
	}
	if want := float64(slowest.Milliseconds()); slowestShown != want {
		t.Errorf("the slowest probe the series shows took %v ms, want the run's slowest, %v ms", slowestShown, want)
	}
}
