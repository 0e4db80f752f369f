package middleware

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// A heal that starts and ends records no result, yet the status names it
// while it runs: the kept answer, read without a lock, must not outlive
// either.
func TestStatusAnswerShowsAHealStartAndEnd(t *testing.T) {
	m, err := New(check.Func(func(context.Context) error { return errors.New("down") }), Config{Mode: ModeProbe})
	if err != nil {
		t.Fatal(err)
	}
	m.Probe(context.Background())
	h := m.StatusHandler()
	status := func() string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		return w.Body.String()
	}
	before := status()
	if status() != before || strings.Contains(before, "healing") {
		t.Fatalf("before the heal: %q", before)
	}
	heal := &HealStart{Time: m.cfg.Clock.Now(), Attempt: 1, Timeout: time.Minute}
	m.setHealing(heal)
	if got := status(); !strings.Contains(got, "; healing since ") {
		t.Errorf("while healing: %q", got)
	}
	m.endHealing(heal)
	if got := status(); got != before {
		t.Errorf("after the heal: %q, want %q", got, before)
	}
}
