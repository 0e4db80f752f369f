package childproc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// Self returns the command of a child that is this program again, run with
// args (a subcommand and its child mode), its stderr going to stderr: what
// a Fleet's Command is for a command that re-executes itself.
func Self(stderr io.Writer, args ...string) (func(context.Context) *exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot start a child process: %w", err)
	}
	return func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Stderr = stderr
		return cmd
	}, nil
}
