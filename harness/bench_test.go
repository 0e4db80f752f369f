package harness

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Benchmarks measure the lab itself; they run only with -bench. Each
// sub-benchmark does one measurement per iteration: run them with
// -benchtime=1x. Windows are flags so that a quick run stays quick:
//
//	go test -run '^$' -bench Goodput -benchtime 1x ./harness/
var (
	benchWarmup = flag.Duration("lab.warmup", 2*time.Second, "benchmark warm-up before measuring")
	benchWindow = flag.Duration("lab.window", 3*time.Second, "goodput measurement window")
	curveWindow = flag.Duration("lab.curve", 10*time.Second, "handshake curve: probing window per flow count")
)

// greedy dials n flows to the sink and keeps them writing until ctx ends.
// It returns once the flows are dialled; wait waits for the writers.
func greedy(ctx context.Context, b *testing.B, l *Lab, n int) (wait func()) {
	b.Helper()
	conns := make([]net.Conn, n)
	var dwg sync.WaitGroup
	sem := make(chan struct{}, 64)
	var mu sync.Mutex
	failed := 0
	for i := range n {
		dwg.Add(1)
		sem <- struct{}{}
		go func() {
			defer dwg.Done()
			defer func() { <-sem }()
			dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			c, err := l.DialContext(dctx, "tcp", l.SinkAddr().String())
			if err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
				return
			}
			conns[i] = c
		}()
	}
	dwg.Wait()
	if failed > 0 {
		b.Logf("%d of %d greedy flows failed to dial", failed, n)
	}
	buf := make([]byte, 32<<10) // read-only: shared by all writers
	var wg sync.WaitGroup
	for _, c := range conns {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if _, err := c.Write(buf); err != nil {
					return
				}
			}
		}()
	}
	// Closing the connections unblocks writers stuck on a full buffer.
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	return wg.Wait
}

// loadedLab starts a lab over a link with settings s, starts n greedy
// flows and waits out the warm-up. The flows stop and the lab closes when
// the benchmark function returns; ctx ends then too.
func loadedLab(b *testing.B, s Settings, n int) (l *Lab, ctx context.Context) {
	b.Helper()
	return loadedLabConfig(b, Config{Link: s}, n)
}

// loadedLabConfig is loadedLab with a whole Config.
func loadedLabConfig(b *testing.B, cfg Config, n int) (l *Lab, ctx context.Context) {
	b.Helper()
	l = New(cfg)
	if err := l.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	wait := greedy(ctx, b, l, n)
	b.Cleanup(func() {
		cancel()
		wait()
		l.Close()
	})
	sleepCtx(ctx, *benchWarmup)
	b.ResetTimer()
	return l, ctx
}

// senderStats are the client netstack's TCP sender counters.
type senderStats struct{ sent, retransmits, timeouts uint64 }

func clientTCP(l *Lab) senderStats {
	l.client.mu.RLock()
	defer l.client.mu.RUnlock()
	st := l.client.peer.tun.stack.Stats().TCP
	return senderStats{sent: st.SegmentsSent.Value(), retransmits: st.Retransmits.Value(), timeouts: st.Timeouts.Value()}
}

func (a senderStats) add(b senderStats) senderStats {
	return senderStats{a.sent + b.sent, a.retransmits + b.retransmits, a.timeouts + b.timeouts}
}

func (a senderStats) sub(b senderStats) senderStats {
	return senderStats{a.sent - b.sent, a.retransmits - b.retransmits, a.timeouts - b.timeouts}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// BenchmarkGoodput: sink goodput of 1..1000 greedy flows sharing the link,
// as a share of the configured rate (target 90..102%), the CPU the whole
// process spent per GB carried, and the client TCP's retransmissions and
// timeouts, which account for goodput below the link's use.
func BenchmarkGoodput(b *testing.B) {
	for _, rate := range []Rate{20_000_000, 100_000_000} {
		for _, flows := range []int{1, 10, 100, 1000} {
			b.Run(fmt.Sprintf("rate=%v/flows=%d", rate, flows), func(b *testing.B) {
				l, ctx := loadedLab(b, Settings{Rate: rate, Delay: 5 * time.Millisecond, Queue: QueueLimit{Packets: benchQueue(flows)}}, flows)
				var sinkBytes, linkBytes, drops int64
				var cpu, elapsed time.Duration
				var tcp senderStats
				for range b.N {
					up0 := l.Link().Stats().Uplink
					s0, c0, t0, tcp0 := l.Server().SinkStats().BytesIn, cpuTime(), time.Now(), clientTCP(l)
					sleepCtx(ctx, *benchWindow)
					up := l.Link().Stats().Uplink
					sinkBytes += l.Server().SinkStats().BytesIn - s0
					linkBytes += int64(up.Bytes - up0.Bytes)
					drops += int64(up.Drops - up0.Drops)
					cpu += cpuTime() - c0
					elapsed += time.Since(t0)
					tcp = tcp.add(clientTCP(l).sub(tcp0))
				}
				secs := elapsed.Seconds()
				b.ReportMetric(float64(sinkBytes)*8/secs/1e6, "goodput-Mbit/s")
				b.ReportMetric(100*float64(sinkBytes)*8/secs/float64(rate), "goodput-%rate")
				b.ReportMetric(100*float64(linkBytes)*8/secs/float64(rate), "link-%rate")
				b.ReportMetric(cpu.Seconds()/(float64(linkBytes)/1e9), "cpu-s/GB")
				b.ReportMetric(float64(drops), "taildrops")
				// Where goodput under the link's use goes: retransmitted
				// segments, and the timeouts after which gVisor's TCP resends
				// the whole window (it discards what SACK told it on an RTO).
				b.ReportMetric(100*float64(tcp.retransmits)/float64(max(tcp.sent, 1)), "retrans-%")
				b.ReportMetric(float64(tcp.timeouts)/secs, "RTO/s")
			})
		}
	}
}

// BenchmarkLabPerConnection: what one connection through one lab costs,
// with the scenarios' link (20 Mbit/s, 10 ms, 256 packets) and buffers
// (BuffersFor), for 100, 1,000 and 10,000 greedy uploads: the
// memory in use after a collection, heap and goroutine stacks, per
// connection (both netstacks' endpoints and buffers, the sink's goroutine
// and buffer, the writer's goroutine; the lab's own fixed cost spread
// over them), and the CPU the whole process spent per Mbit carried.
//
//	go test -run '^$' -bench LabPerConnection -benchtime 1x ./harness/
func BenchmarkLabPerConnection(b *testing.B) {
	for _, conns := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			before := liveBytes()
			l, ctx := loadedLabConfig(b, Config{
				Link:    Settings{Rate: 20_000_000, Delay: 10 * time.Millisecond, Queue: QueueLimit{Packets: 256}},
				Buffers: BuffersFor(20_000_000, 10*time.Millisecond, conns),
			}, conns)
			var sinkBytes int64
			var cpu, elapsed time.Duration
			var live uint64
			for range b.N {
				s0, c0, t0 := l.Server().SinkStats().BytesIn, cpuTime(), time.Now()
				sleepCtx(ctx, *benchWindow)
				sinkBytes += l.Server().SinkStats().BytesIn - s0
				cpu += cpuTime() - c0
				elapsed += time.Since(t0)
				live = max(live, liveBytes())
			}
			open := l.Server().SinkStats().Open
			mbit := float64(sinkBytes) * 8 / 1e6
			b.ReportMetric(float64(open), "conns-open")
			b.ReportMetric(float64(live-min(live, before))/float64(max(open, 1)), "live-B/conn")
			b.ReportMetric(mbit/elapsed.Seconds(), "goodput-Mbit/s")
			if mbit > 0 {
				b.ReportMetric(1000*cpu.Seconds()/mbit, "cpu-ms/Mbit")
			} else {
				b.Log("nothing delivered in the window: no CPU per Mbit")
			}
		})
	}
}

// liveBytes is the heap and the goroutine stacks in use after a
// collection.
func liveBytes() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

// BenchmarkIdleRTT: one round trip of one byte through the idle tunnel
// (echo sink) with a 10 ms one-way delay; ideal is 20 ms.
func BenchmarkIdleRTT(b *testing.B) {
	const delay = 10 * time.Millisecond
	l := New(Config{Link: Settings{Rate: 20_000_000, Delay: delay}})
	if err := l.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	c, err := l.DialContext(b.Context(), "tcp", l.EchoAddr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p := []byte{1}
	rtts := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := c.Write(p); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, p); err != nil {
			b.Fatal(err)
		}
		rtts = append(rtts, time.Since(t0))
	}
	slices.Sort(rtts)
	med := rtts[len(rtts)/2]
	b.ReportMetric(float64(med)/float64(time.Millisecond), "p50-ms")
	b.ReportMetric(100*(float64(med)/float64(2*delay)-1), "p50-%over-2xdelay")
}

// BenchmarkHandshakeUnderLoad is the curve the project exists for: the
// latency of a new dial + verified TLS handshake through the tunnel while
// N greedy flows share a 20 Mbit/s link with a 256-packet queue. Probes
// start every 200 ms for -lab.curve; each may take up to 20 s.
func BenchmarkHandshakeUnderLoad(b *testing.B) {
	for _, flows := range []int{0, 10, 100, 1000, 3000} {
		b.Run(fmt.Sprintf("flows=%d", flows), func(b *testing.B) {
			l, ctx := loadedLab(b, Settings{Rate: 20_000_000, Delay: 10 * time.Millisecond, Queue: QueueLimit{Packets: 256}}, flows)
			var lat []time.Duration
			for range b.N {
				lat = append(lat, probeHandshakes(ctx, l, *curveWindow, 200*time.Millisecond, 20*time.Second)...)
			}
			slices.Sort(lat)
			over := 0
			for _, d := range lat {
				if d > 10*time.Second {
					over++
				}
			}
			b.ReportMetric(float64(len(lat)), "probes")
			b.ReportMetric(lat[len(lat)/2].Seconds()*1000, "p50-ms")
			b.ReportMetric(lat[(len(lat)*99)/100].Seconds()*1000, "p99-ms")
			b.ReportMetric(100*float64(over)/float64(len(lat)), "%over10s")
		})
	}
}

// probeHandshakes starts a dial + TLS handshake every period for window and
// returns their latencies; a failed probe counts as its timeout.
func probeHandshakes(ctx context.Context, l *Lab, window, period, timeout time.Duration) []time.Duration {
	var (
		mu  sync.Mutex
		lat []time.Duration
		wg  sync.WaitGroup
	)
	tick := time.NewTicker(period)
	defer tick.Stop()
	end := time.Now().Add(window)
	for time.Now().Before(end) && ctx.Err() == nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			d := timeout
			if c, err := l.DialContext(pctx, "tcp", l.TLSAddr().String()); err == nil {
				tc := tls.Client(c, &tls.Config{RootCAs: l.CA().Pool, ServerName: TLSHost})
				if tc.HandshakeContext(pctx) == nil {
					d = time.Since(t0)
				}
				c.Close()
			}
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		}()
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	wg.Wait()
	return lat
}

// benchQueue sizes the goodput benchmark's queue: 256 packets, or two per
// flow when there are more flows. With less than a packet of queue per
// flow, a thousand TCP flows live in constant loss and spend a few percent
// of the link on retransmissions, which measures TCP, not the link.
func benchQueue(flows int) int { return max(256, 2*flows) }
