package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/syncbuf"
	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

// TestHealCommandConfig: Config.HealCommand is the heal the loop runs, in
// place of Monitor.Heal, and the Logger hears of it.
func TestHealCommandConfig(t *testing.T) {
	healed := filepath.Join(t.TempDir(), "healed")
	healedByFunc := make(chan struct{}, 1)
	healEnded := make(chan struct{}, 16)
	var log syncbuf.Buffer
	srv, err := server.New(middleware.CheckerFunc(func(context.Context) error { return errors.New("down") }), server.Config{
		Monitor: middleware.Config{
			Heal:        func(context.Context) error { healedByFunc <- struct{}{}; return nil },
			HealBackoff: middleware.HealBackoff{Initial: 1},
			Observer: middleware.ObserverFuncs{OnHealed: func(middleware.HealEvent) {
				healEnded <- struct{}{}
			}},
		},
		HealCommand: "touch '" + healed + "'",
		Logger:      slog.New(slog.NewTextHandler(&log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	<-healEnded // the first heal
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(healed); err != nil {
		t.Errorf("the heal command did not run: %v", err)
	}
	select {
	case <-healedByFunc:
		t.Error("Monitor.Heal ran although HealCommand is set")
	default:
	}
	if log.String() == "" {
		t.Error("nothing logged")
	}
}
