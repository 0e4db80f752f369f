package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/syncbuf"
)

func TestHealCommand(t *testing.T) {
	t.Parallel()
	logs := new(syncbuf.Buffer)
	logger := slog.New(slog.NewTextHandler(logs, nil))

	file := filepath.Join(t.TempDir(), "healed")
	if err := HealCommand(fmt.Sprintf("echo restarting; touch '%s'", file), logger)(context.Background()); err != nil {
		t.Fatalf("heal: %v", err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the heal command did not run: %v", err)
	}
	if !strings.Contains(logs.String(), "restarting") {
		t.Errorf("the output is not logged:\n%s", logs)
	}

	err := HealCommand("echo broken >&2; exit 3", logger)(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("failing heal returned %v, want an error naming exit status 3", err)
	}
	if !strings.Contains(logs.String(), "broken") {
		t.Errorf("stderr of the command is not logged:\n%s", logs)
	}

	// A command that prints without end is logged by its two ends only.
	logs.Reset()
	if err := HealCommand("echo THE-START; yes | head -c 10000000; echo THE-END", logger)(context.Background()); err != nil {
		t.Fatalf("heal: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "THE-START") || !strings.Contains(l, "THE-END") ||
		!strings.Contains(l, "bytes omitted") || len(l) > 4*healOutputEnd+1024 {
		t.Errorf("10 MB of output logged as %d bytes: %.300q...", len(l), l)
	}

	// The heal's context bounds the command.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	// A child of the shell that keeps the output open dies with it.
	if err := HealCommand("sleep 30 & sleep 30; echo done", logger)(ctx); err == nil {
		t.Error("a heal killed by its context returned nil")
	}
	if d := time.Since(start); d > healWaitDelay/2 {
		t.Errorf("the heal outlived its context by %v", d)
	}
}
