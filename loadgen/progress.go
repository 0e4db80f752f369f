package loadgen

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress shows a run's progress as it goes: a progress bar on a
// terminal, otherwise one plain line per second. Its Second method is a
// Config.OnSecond (or Fleet.OnSecond); call Done when the run is over.
type Progress struct {
	mu     sync.Mutex
	w      io.Writer
	bar    *progressbar.ProgressBar
	prefix string
	conns  int
	first  int64 // the T of the first second shown
}

// NewProgress returns the progress display on w of a run of conns
// connections expected to take expected, each line starting with prefix;
// a bar when w is a terminal.
func NewProgress(w io.Writer, terminal bool, prefix string, conns int, expected time.Duration) *Progress {
	p := &Progress{w: w, prefix: prefix, conns: conns}
	if terminal {
		p.bar = progressbar.NewOptions64(int64(max(expected.Seconds(), 1)),
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(prefix+"starting"),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionSetWidth(20),
		)
	}
	return p
}

// Second shows s, one second of the run.
func (p *Progress) Second(s Second) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// s covers [T, T+1) and the first second reported is the run's first
	// (children start a little after this progress was made).
	if p.first == 0 {
		p.first = s.T
	}
	elapsed := s.T + 1 - p.first
	line := fmt.Sprintf("%s%ds open %d/%d up %.1f Mbit/s down %.1f Mbit/s connects %d errors %d disruptions %d",
		p.prefix, elapsed, s.Open, p.conns, float64(s.BytesUp)*8/1e6, float64(s.BytesDown)*8/1e6,
		s.Connects, s.ConnectErrors, s.Disruptions)
	if s.Probes > 0 {
		line += fmt.Sprintf(" probe max %.1f ms failed %d", s.ProbeMaxMS, s.ProbeFailures)
	}
	if p.bar != nil {
		p.bar.Describe(line)
		_ = p.bar.Set64(min(elapsed, p.bar.GetMax64()))
		return
	}
	fmt.Fprintln(p.w, line)
}

// Done ends the display: the bar's line is left as it is.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Exit()
		fmt.Fprintln(p.w)
	}
}
