package sink

import (
	"context"
	"net"

	"golang.org/x/sync/errgroup"

	"github.com/tunnelprobe/tunnelprobe/internal/httpserve"
)

// RunServingStats is Run that also serves g's StatsHandler on stats (as
// tunnelprobe sink --stats does) from the moment the group is ready, after
// ready returns, until Run returns; a stats server that fails stops the
// group, and its error is returned. stats nil means Run alone. stats is
// closed in every case, also when the group fails before it is ready, so
// that the caller may listen on it before and report a busy address as its
// own error.
func (g *Group) RunServingStats(ctx context.Context, stats net.Listener, ready func(addr net.Addr)) error {
	if stats == nil {
		return g.Run(ctx, ready)
	}
	group, gctx := errgroup.WithContext(ctx)
	group.Go(func() error {
		return g.Run(gctx, func(addr net.Addr) {
			ready(addr)
			// Added from within a running Go, so before Wait can return.
			group.Go(func() error { return httpserve.Serve(gctx, stats, g.StatsHandler(), httpserve.Options{}) })
		})
	})
	err := group.Wait()
	stats.Close() // when the group failed before it was ready; otherwise Serve has
	return err
}
