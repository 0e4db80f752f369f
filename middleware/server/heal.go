package server

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/procgroup"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

const (
	// healWaitDelay bounds how long a heal command's output is awaited
	// after it exits or is killed: a command that leaves a background child
	// holding its stdout must not stall the health loop.
	healWaitDelay = 5 * time.Second
	// healOutputEnd is how much of each end of a heal command's output is
	// kept and logged: the rest is counted, not held.
	healOutputEnd = 2 << 10
)

// HealCommand returns a HealFunc that runs command with /bin/sh -c, killed
// with every process it started when the heal's ctx ends (the monitor's
// HealTimeout, or shutdown). The first and last 2 KiB of its combined output
// are logged to logger (nil: not logged); a non-zero exit is an error.
func HealCommand(command string, logger *slog.Logger) middleware.HealFunc {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
		procgroup.KillOnCancel(cmd)
		cmd.WaitDelay = healWaitDelay
		out := newHeadTail(healOutputEnd)
		cmd.Stdout, cmd.Stderr = out, out
		err := cmd.Run()
		logger.Info("heal command ran", "command", command, "output", out.String(), "err", err)
		if err != nil {
			return fmt.Errorf("heal command %q: %w", command, err)
		}
		return nil
	}
}
