package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/procgroup"
	"github.com/tunnelprobe/tunnelprobe/internal/reaper"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

const (
	// healOutputWait bounds how long a heal command's output is awaited
	// after it exits and what it left in its process group is killed: a
	// child that left the group (setsid) and still holds the output must
	// not stall the heal. Its output is read on, in the background, until
	// it closes it.
	healOutputWait = 5 * time.Second
	// healOutputEnd is how much of each end of a heal command's output is
	// kept and logged: the rest is counted, not held.
	healOutputEnd = 2 << 10
)

// HealCommand returns a HealFunc that runs command with /bin/sh -c. Its exit
// status decides: zero is a heal that worked, anything else an error. The
// command runs in a process group of its own; when it exits, what it left
// running in that group (a shell's background job) is killed, so that
// repeated heals leave nothing behind. A daemon meant to outlive the heal
// must be in a session of its own before the command exits:
//
//	setsid sh -c 'openvpn --config /etc/vpn.conf >>/var/log/vpn.log 2>&1 &'
//
// ("setsid openvpn ... &" races with the command's exit: if the shell exits
// first, the daemon is still in the group and killed). What a daemon
// writes to the heal's output later is read and dropped; once the process
// exits nothing reads it, so a daemon should send its output elsewhere. When the heal's ctx ends (the
// monitor's HealTimeout, or shutdown) the whole group is killed. The first
// and last 2 KiB of its combined output are logged to logger (nil: not
// logged).
func HealCommand(command string, logger *slog.Logger) middleware.HealFunc {
	return healCommand(command, logger, nil)
}

// healCommand is HealCommand, its command started and waited for through
// rp (nil: os/exec alone), so that a reaper leaves its exit status alone.
func healCommand(command string, logger *slog.Logger, rp *reaper.Reaper) middleware.HealFunc {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
		procgroup.KillOnCancel(cmd)
		// The output goes through a pipe of our own rather than exec's
		// copying, so that Wait returns when the shell exits, whoever
		// else holds the pipe.
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("heal command %q: %w", command, err)
		}
		cmd.Stdout, cmd.Stderr = w, w
		out := newHeadTail(healOutputEnd)
		copied := make(chan struct{})
		err = rp.Start(cmd)
		w.Close()
		if err != nil {
			r.Close()
			return fmt.Errorf("heal command %q: %w", command, err)
		}
		go func() {
			defer close(copied)
			defer r.Close()
			// Ends at EOF, when the last process holding the output
			// closes it: a detached child may hold it long after the
			// heal, and is read on rather than killed by a SIGPIPE at
			// its next write.
			io.Copy(out, r)
		}()
		err = rp.Wait(cmd)
		// After a cancellation the whole group was killed already. (A
		// select, not ctx.Err: a fake-clock context blocks in Err.)
		cancelled := false
		select {
		case <-ctx.Done():
			cancelled = true
		default:
		}
		leftovers := !cancelled && procgroup.KillLeftovers(cmd)
		detached := false
		select {
		case <-copied:
		case <-time.After(healOutputWait):
			detached = true // a child outside the group holds the output
		}
		attrs := []any{"command", command, "output", out.String(), "err", err}
		if leftovers {
			attrs = append(attrs, "left_behind", "killed what it left running in its process group")
		}
		if detached {
			attrs = append(attrs, "output_held", fmt.Sprintf("logged what came in %v: a detached child holds the output, read on and dropped", healOutputWait))
		}
		logger.Info("heal command ran", attrs...)
		if err != nil {
			return fmt.Errorf("heal command %q: %w", command, err)
		}
		return nil
	}
}
