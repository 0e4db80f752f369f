package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// The JSON example of docs/middleware.md has the fields a real answer has:
// a failed /check/ of a probe-mode monitor.
func TestDocumentedJSONHasTheRealFields(t *testing.T) {
	md, err := os.ReadFile("../docs/middleware.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(md), "```json\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("no json block in docs/middleware.md")
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(block), &doc); err != nil {
		t.Fatalf("the documented JSON: %v", err)
	}

	refused := check.Func(func(context.Context) error { return errors.New("tcp 127.0.0.1:1: dial: connection refused") })
	m, err := middleware.New(refused, middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/check/?format=json", nil))
	var real map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &real); err != nil {
		t.Fatal(err)
	}
	for key := range real {
		if _, ok := doc[key]; !ok {
			t.Errorf("the documented JSON lacks %q", key)
		}
	}
	entry := func(m map[string]any) map[string]any {
		return m["checks"].(map[string]any)["tunnel:connectivity"].([]any)[0].(map[string]any)
	}
	if got, want := slices.Sorted(maps.Keys(entry(doc))), slices.Sorted(maps.Keys(entry(real))); !slices.Equal(got, want) {
		t.Errorf("the documented check has %v, a real one %v", got, want)
	}
}
