package server_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tunnelprobe/tunnelprobe/internal/reaper"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

// recordsOf is a slog.Handler that sends the records with message msg to
// records (buffered), and drops every other.
type recordsOf struct {
	msg     string
	records chan<- slog.Record
}

func (h recordsOf) Enabled(context.Context, slog.Level) bool { return true }
func (h recordsOf) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h recordsOf) WithGroup(string) slog.Handler            { return h }
func (h recordsOf) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.records <- r.Clone()
	}
	return nil
}

// With Config.Reap the orphan a heal leaves (a background job, killed
// when the heal ends) is reaped instead of staying a zombie, and the
// heal's own exit status still decides. The test process is made a child
// subreaper, to inherit the orphans as PID 1 does.
func TestReapConfig(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skipf("cannot become a child subreaper: %v", err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	healed := make(chan middleware.HealEvent, 1)
	reaped := make(chan slog.Record, 16)
	srv, err := server.New(check.Func(func(context.Context) error { return errors.New("down") }), server.Config{
		Monitor: middleware.Config{
			HealBackoff: middleware.HealBackoff{Initial: 1, Step: time.Hour}, // one heal
			Observer:    middleware.ObserverFuncs{OnHealed: func(e middleware.HealEvent) { healed <- e }},
		},
		HealCommand: "sleep 1714 >/dev/null 2>&1 & echo bg; exit 3",
		Reap:        true,
		Logger:      slog.New(recordsOf{"reaped an orphan", reaped}),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := serve(t, srv)
	defer stop()
	if e := <-healed; e.Err == nil || !strings.HasSuffix(e.Err.Error(), ": exit status 3") {
		t.Errorf("the heal: %v, want its command's exit status 3", e.Err)
	}
	select {
	case r := <-reaped:
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "status" && a.Value.String() != "signal: killed" {
				t.Errorf("reaped an orphan whose status is %v, want the killed sleep", a.Value)
			}
			return true
		})
	case <-time.After(10 * time.Second):
		t.Fatal("the heal's orphan was not reaped")
	}
	children, err := reaper.Children(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for pid, state := range children {
		if state == 'Z' {
			t.Errorf("a zombie left: %d", pid)
		}
	}
}
