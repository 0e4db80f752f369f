package server

import (
	"context"
	"log/slog"
	"strconv"
	"syscall"

	"github.com/tunnelprobe/tunnelprobe/internal/reaper"
)

// newReaper returns the reaper cfg.Reap asks for, which logs each orphan
// it reaps at debug level; nil without Reap.
func newReaper(cfg Config, logger *slog.Logger) *reaper.Reaper {
	if !cfg.Reap {
		return nil
	}
	return reaper.New(func(o reaper.Orphan) {
		logger.Debug("reaped an orphan", "pid", o.Pid, "status", exitText(o.Status))
	})
}

// reap runs the reaper, if there is one, until ctx ends. One that cannot
// run is logged and the server serves on: a health endpoint is worth more
// than a clean process table.
func (s *Server) reap(ctx context.Context) {
	if s.reaper == nil {
		return
	}
	s.logger.Info("reaping the orphans this process inherits")
	if err := s.reaper.Run(ctx); err != nil {
		s.logger.Warn("cannot reap orphans: each one a heal leaves behind stays a zombie", "err", err)
	}
}

// exitText says how a process ended, as os.ProcessState does.
func exitText(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "signal: " + ws.Signal().String()
	}
	return "exit status " + strconv.Itoa(ws.ExitStatus())
}
