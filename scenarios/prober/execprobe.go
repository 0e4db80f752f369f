package prober

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/procgroup"
)

// execWaitDelay bounds the wait for an exec probe's output once its
// command has exited or been killed.
const execWaitDelay = time.Second

// Exec performs one kubelet-style exec probe: it runs command (the program
// and its arguments, no shell) on this machine, as the kubelet runs it in
// the container, and
//   - passes when it exits 0 and fails when it exits with any other code;
//   - fails when it runs longer than timeout, and kills it then, with
//     every process it started;
//   - errs (Unknown) when it cannot start at all, such as a program that
//     does not exist: the kubelet tries again at once, up to three
//     attempts, and then throws the result away, so such a probe never
//     restarts anything.
//
// Its combined output, up to 10 KiB as the kubelet reads, goes to Body (the
// first 256 bytes). Ending ctx also ends the probe.
func Exec(ctx context.Context, command []string, timeout time.Duration) Result {
	return timed(func() Result { return execProbe(ctx, command, timeout) })
}

func execProbe(ctx context.Context, command []string, timeout time.Duration) Result {
	if len(command) == 0 {
		return Result{Outcome: Unknown, Err: errors.New("exec probe: no command")}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	procgroup.KillOnCancel(cmd)
	cmd.WaitDelay = execWaitDelay
	out := &limitedBuffer{max: maxProbeBody}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return Result{Outcome: Unknown, Err: fmt.Errorf("exec probe: %w", err)}
	}
	err := cmd.Wait()
	res := Result{Body: string(out.Bytes()[:min(out.Len(), maxLoggedBody)])}
	var exit *exec.ExitError
	switch {
	case err == nil:
		res.Outcome = Success
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Outcome, res.Err = Failure, fmt.Errorf("command timed out after %v", timeout)
	case errors.As(err, &exit):
		res.Outcome, res.Err = Failure, fmt.Errorf("command exited with code %d", exit.ExitCode())
	default:
		res.Outcome, res.Err = Unknown, fmt.Errorf("exec probe: %w", err)
	}
	return res
}

// limitedBuffer keeps the first max bytes written to it and drops the
// rest without error, as the kubelet's LimitWriter.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
