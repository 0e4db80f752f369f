// Package childproc runs the child processes of a multi-process command
// (load and sink --procs): a child reads its settings from its stdin and
// answers in JSON lines on its stdout. The end of the context given to
// Start sends the child SIGTERM, as Ctrl-C would, so that it still reports
// what it measured; it is killed only if it has not exited WaitDelay later.
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

// Child is a started child process.
type Child struct {
	cmd *exec.Cmd
	// Stdin is the child's standard input; Wait closes it.
	Stdin io.WriteCloser
	dec   *json.Decoder
}

// Start starts cmd, made with exec.CommandContext, with pipes to its stdin
// and stdout; cmd.Stderr is the caller's to set.
func Start(cmd *exec.Cmd) (*Child, error) {
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
	return &Child{cmd: cmd, Stdin: stdin, dec: json.NewDecoder(stdout)}, nil
}

// Send writes v to the child's stdin as one JSON line.
func (c *Child) Send(v any) error { return json.NewEncoder(c.Stdin).Encode(v) }

// Next decodes the child's next message into v; io.EOF once the child has
// closed its stdout.
func (c *Child) Next(v any) error {
	err := c.dec.Decode(v)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("child %d: bad message: %w", c.cmd.Process.Pid, err)
	}
	return err
}

// Wait closes the child's stdin and waits for it to exit, after its stdout
// has been read to the end.
func (c *Child) Wait() error {
	c.Stdin.Close()
	return c.cmd.Wait()
}
