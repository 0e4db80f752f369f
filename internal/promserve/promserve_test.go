package promserve_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/internal/promserve"
)

// TestHandlerServesTheRuntimeMetrics: a fresh registry already carries the
// Go runtime's and the process's metrics, and Handler serves them.
func TestHandlerServesTheRuntimeMetrics(t *testing.T) {
	rec := httptest.NewRecorder()
	promserve.Handler(promserve.NewRegistry()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	for _, name := range []string{"go_goroutines", "process_"} {
		if !strings.Contains(rec.Body.String(), name) {
			t.Errorf("no %s metric served", name)
		}
	}
}
