package childproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// WaitDelay is how long a child may take to exit after the SIGTERM that
// ends it before it is killed. Children stop within a second or two; this
// is only a backstop.
const WaitDelay = 5 * time.Second

// process is one started child process.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Reader
	dec    *json.Decoder
}

// start starts cmd, made with exec.CommandContext, with pipes to its stdin
// and stdout; cmd.Stderr is the caller's to set. The end of cmd's context
// sends it SIGTERM, and the kill WaitDelay later happens whether or not
// anyone waits for it yet.
func start(cmd *exec.Cmd) (*process, error) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = WaitDelay
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start a child process: %w", err)
	}
	return &process{cmd: cmd, stdin: stdin, stdout: stdout, dec: json.NewDecoder(stdout)}, nil
}

// send writes v to the child's stdin as one JSON line. A child that cannot
// read it fails and says why, so the error is only informative.
func (p *process) send(v any) error { return json.NewEncoder(p.stdin).Encode(v) }

// next decodes the child's next message into v; io.EOF once the child has
// closed its stdout. After any other error the rest of stdout is discarded,
// so that the child never blocks writing to a pipe nobody reads.
func (p *process) next(v any) error {
	err := p.dec.Decode(v)
	if err != nil && !errors.Is(err, io.EOF) {
		_, _ = io.Copy(io.Discard, p.stdout)
		err = fmt.Errorf("child %d: bad message: %w", p.cmd.Process.Pid, err)
	}
	return err
}

// wait closes the child's stdin and waits for it to exit; call it once
// next has returned an error (stdout has been read to the end).
func (p *process) wait() error {
	p.stdin.Close()
	return p.cmd.Wait()
}
