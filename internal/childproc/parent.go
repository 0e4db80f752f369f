package childproc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Parent is a child's end of the pipes to its parent, which RunChild gives
// the command's function to report through. Its methods are safe for
// concurrent use; what a parent that went away does not read is lost.
type Parent[M any] struct {
	mu    sync.Mutex
	enc   *json.Encoder
	lines <-chan []byte
}

// Ready tells the parent that the child is set up.
func (p *Parent[M]) Ready() { p.send(Message[M]{Ready: true}) }

// Send reports m to the parent (Fleet.Receive).
func (p *Parent[M]) Send(m M) { p.send(Message[M]{Data: &m}) }

func (p *Parent[M]) send(m Message[M]) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.enc.Encode(m) // a parent that went away has no use for it
}

// Receive decodes the parent's next line (what Fleet.OnReady broadcasts)
// into v. It returns ctx's error when ctx ends first, io.EOF once the
// parent has closed the pipe.
func (p *Parent[M]) Receive(ctx context.Context, v any) error {
	select {
	case line, ok := <-p.lines:
		if !ok {
			return io.EOF
		}
		return json.Unmarshal(line, v)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RunChild is the child side of a Fleet: it reads its configuration from
// the first line of stdin, calls run with it and a Parent that writes to
// stdout, and tells the parent the error run returns, which it returns
// too. When ctx ends before the configuration comes, it returns nil
// without calling run: the child was stopped before it had work.
func RunChild[C, M any](ctx context.Context, stdin io.Reader, stdout io.Writer, run func(ctx context.Context, c C, p *Parent[M]) error) error {
	// Stdin is read in a goroutine so that the end of ctx ends the waits
	// for the parent. It ends when stdin does, or when it would hand a
	// line to a RunChild that has returned.
	lines := make(chan []byte)
	done := make(chan struct{})
	defer close(done)
	go readLines(stdin, lines, done)

	p := &Parent[M]{enc: json.NewEncoder(stdout), lines: lines}
	var c C
	err := p.Receive(ctx, &c)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil
	case err != nil:
		err = fmt.Errorf("no configuration from the parent: %w", err)
	default:
		err = run(ctx, c, p)
	}
	if err != nil {
		p.send(Message[M]{Error: err.Error()})
	}
	return err
}

// readLines sends the lines of r on lines until r ends or done is closed.
func readLines(r io.Reader, lines chan<- []byte, done <-chan struct{}) {
	defer close(lines)
	in := bufio.NewReader(r)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			select {
			case lines <- line:
			case <-done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}
