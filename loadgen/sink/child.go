package sink

import (
	"context"
	"io"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/childproc"
)

// statsEvery is how often a child reports its counters.
const statsEvery = time.Second

// childConfig is what a Group tells each of its children.
type childConfig struct {
	Listen string `json:"listen"`
	Echo   bool   `json:"echo,omitempty"`
}

// RunChild is the child side of a Group with Procs > 1: it reads its
// settings from stdin, listens on the parent's port with SO_REUSEPORT and
// reports its Stats on stdout every second and when ctx ends. It returns an
// error, which it also tells the parent, when it could not serve.
func RunChild(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	return childproc.RunChild(ctx, stdin, stdout, serveChild)
}

// serveChild serves c until ctx ends, reporting to p.
func serveChild(ctx context.Context, c childConfig, p *childproc.Parent[Stats]) error {
	ln, err := ListenReusePort(ctx, "tcp", c.Listen)
	if err != nil {
		return err
	}
	srv := &Server{Echo: c.Echo}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	p.Ready()
	tick := time.NewTicker(statsEvery)
	defer tick.Stop()
	var serveErr error
loop:
	for {
		select {
		case <-tick.C:
			p.Send(srv.Stats())
		case err := <-served:
			served = nil
			if ctx.Err() == nil {
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
	p.Send(srv.Stats()) // the last counters, all connections closed
	return serveErr
}
