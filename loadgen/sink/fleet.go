package sink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
)

// statsEvery is how often a child reports its counters.
const statsEvery = time.Second

func (fl *Fleet) startTimeout() time.Duration {
	if fl.StartTimeout > 0 {
		return fl.StartTimeout
	}
	return 30 * time.Second
}

// Add returns s with o's counters added.
func (s Stats) Add(o Stats) Stats {
	s.Conns += o.Conns
	s.Open += o.Open
	s.BytesIn += o.BytesIn
	s.BytesOut += o.BytesOut
	return s
}

// ChildMessage is one line a sink child writes to its parent, in JSON.
type ChildMessage struct {
	// Addr is the address the child listens on: it is ready.
	Addr string `json:"addr,omitempty"`
	// Stats are the child's counters, sent every second and on exit.
	Stats *Stats `json:"stats,omitempty"`
	// Error is why the child gives up.
	Error string `json:"error,omitempty"`
}

// Fleet is a sink parent's children, each a program that calls RunChild
// with its stdin and stdout (tunnelprobe sink runs itself that way), all
// listening on the parent's port with SO_REUSEPORT: it collects the
// counters they report. The zero value but Command is ready to use.
type Fleet struct {
	// Command returns the command of one child, made with
	// exec.CommandContext(ctx, ...): the end of ctx stops it. Required.
	Command func(ctx context.Context) *exec.Cmd
	// StartTimeout bounds the wait for every child to listen; zero means
	// 30 s.
	StartTimeout time.Duration

	mu       sync.Mutex
	children []*childproc.Child
	latest   []Stats
	wg       sync.WaitGroup // the readers of the children's stdout
}

// Start starts n children listening on addr, echoing with echo, and
// returns once all of them listen. A child that exits before ctx ends
// cancels the run with the reason; the end of ctx stops them all.
func (fl *Fleet) Start(ctx context.Context, cancel context.CancelCauseFunc, n int, addr string, echo bool) error {
	ready := make(chan error, n) // one value per child: it listens, or why not
	for i := range n {
		c, err := childproc.Start(fl.Command(ctx))
		if err != nil {
			return err
		}
		// A child that cannot read it fails and says why.
		_ = c.Send(ChildConfig{Listen: addr, Echo: echo})
		fl.mu.Lock()
		fl.children = append(fl.children, c)
		fl.latest = append(fl.latest, Stats{})
		fl.mu.Unlock()
		fl.wg.Go(func() { fl.read(ctx, cancel, i, c, ready) })
	}
	timeout := time.NewTimer(fl.startTimeout())
	defer timeout.Stop()
	for range n {
		select {
		case err := <-ready:
			if err != nil {
				return err
			}
		case <-timeout.C:
			return fmt.Errorf("children not listening after %v", fl.startTimeout())
		case <-ctx.Done():
			return nil // stopped while starting: not an error
		}
	}
	return nil
}

// read handles the messages of child i until it closes its stdout.
func (fl *Fleet) read(ctx context.Context, cancel context.CancelCauseFunc, i int, c *childproc.Child, ready chan<- error) {
	listening := false
	for {
		var m ChildMessage
		if err := c.Next(&m); err != nil {
			if !listening {
				ready <- fmt.Errorf("sink process %d exited before listening", i+2)
			} else if ctx.Err() == nil {
				cancel(fmt.Errorf("sink process %d exited", i+2))
			}
			if !errors.Is(err, io.EOF) {
				cancel(err)
			}
			return
		}
		switch {
		case m.Error != "":
			cancel(fmt.Errorf("sink process %d: %s", i+2, m.Error))
		case m.Addr != "" && !listening:
			listening = true
			ready <- nil
		case m.Stats != nil:
			fl.mu.Lock()
			fl.latest[i] = *m.Stats
			fl.mu.Unlock()
		}
	}
}

// Stats adds up the counters the children last reported.
func (fl *Fleet) Stats() Stats {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	var s Stats
	for _, l := range fl.latest {
		s = s.Add(l)
	}
	return s
}

// Size is the number of children started.
func (fl *Fleet) Size() int {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return len(fl.children)
}

// Wait waits for the readers, which return once the children, stopped by
// the end of the context given to Start, have sent their last counters,
// then for the children themselves.
func (fl *Fleet) Wait() error {
	fl.wg.Wait()
	fl.mu.Lock()
	defer fl.mu.Unlock()
	var errs []error
	for _, c := range fl.children {
		if err := c.Wait(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				errs = append(errs, fmt.Errorf("sink process exited: %v", ee))
			}
			// Otherwise the error is the context's: the child was
			// stopped, as it should be.
		}
	}
	return errors.Join(errs...)
}

// ChildConfig is what a Fleet tells each child, as a JSON line on its
// stdin.
type ChildConfig struct {
	Listen string `json:"listen"`
	Echo   bool   `json:"echo,omitempty"`
}

// RunChild is the child side of a Fleet: it reads its ChildConfig from
// stdin, listens on the parent's port with SO_REUSEPORT and reports its
// counters as ChildMessages on stdout every second and when ctx ends. It
// returns an error when it could not serve.
func RunChild(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	enc := json.NewEncoder(stdout)
	var f ChildConfig
	if err := json.NewDecoder(stdin).Decode(&f); err != nil {
		err = fmt.Errorf("no settings from the parent: %w", err)
		_ = enc.Encode(ChildMessage{Error: err.Error()})
		return err
	}
	ln, err := ListenReusePort(ctx, "tcp", f.Listen)
	if err != nil {
		_ = enc.Encode(ChildMessage{Error: err.Error()})
		return err
	}
	srv := &Server{Echo: f.Echo}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	// A parent that is gone reads nothing; ctx ends the child then.
	_ = enc.Encode(ChildMessage{Addr: ln.Addr().String()})
	tick := time.NewTicker(statsEvery)
	defer tick.Stop()
	var serveErr error
loop:
	for {
		select {
		case <-tick.C:
			st := srv.Stats()
			_ = enc.Encode(ChildMessage{Stats: &st})
		case err := <-served:
			served = nil
			if err != nil && ctx.Err() == nil {
				_ = enc.Encode(ChildMessage{Error: err.Error()})
				serveErr = err
			}
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	if served != nil {
		<-served
	}
	st := srv.Stats()
	_ = enc.Encode(ChildMessage{Stats: &st})
	return serveErr
}
