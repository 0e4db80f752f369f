package reaper

import (
	"os/exec"
	"sync"
	"syscall"
)

// An Orphan is a child the Reaper waited for: its pid and how it ended.
type Orphan struct {
	Pid    int
	Status syscall.WaitStatus
}

// A Reaper waits for the children of this process that it did not start.
type Reaper struct {
	reaped func(Orphan)
	// kick asks Run to look again: see Wait.
	kick chan struct{}

	// mu is held while a child is forked and registered, and while Run
	// looks for orphans, so that Run never sees a child of ours it does
	// not know yet.
	mu sync.Mutex
	// ours are the pids of the children started by Start that Wait has
	// not waited for yet: os/exec's to reap.
	ours map[int]struct{}
}

// New returns a Reaper that tells reaped (nil: no one) of each orphan it
// waits for. It starts nothing.
func New(reaped func(Orphan)) *Reaper {
	return &Reaper{reaped: reaped, kick: make(chan struct{}, 1), ours: map[int]struct{}{}}
}

// Start starts cmd as cmd.Start does, and leaves it to os/exec: Run does
// not reap it. Wait for it with [Reaper.Wait].
func (r *Reaper) Start(cmd *exec.Cmd) error {
	if r == nil {
		return cmd.Start()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	r.ours[cmd.Process.Pid] = struct{}{}
	return nil
}

// Wait waits for cmd, started by Start, as cmd.Wait does and returns its
// error: its exit status is its own.
func (r *Reaper) Wait(cmd *exec.Cmd) error {
	if r == nil {
		return cmd.Wait()
	}
	err := cmd.Wait()
	r.mu.Lock()
	delete(r.ours, cmd.Process.Pid)
	r.mu.Unlock()
	// Between cmd.Wait and the delete, an orphan could have taken the pid
	// over and exited, and Run passed it over as ours: look again.
	select {
	case r.kick <- struct{}{}:
	default:
	}
	return err
}
