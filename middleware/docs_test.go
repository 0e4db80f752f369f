package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	healthserver "github.com/tunnelprobe/tunnelprobe/middleware/server"
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

// docsFile returns the text of a file of the repository, path relative to
// its root.
func docsFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile("../" + path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The endpoints table of docs/middleware.md has a row for each path the
// handlers and the server answer: the status, /check/ and /metrics.
func TestDocumentedEndpoints(t *testing.T) {
	_, section, ok := strings.Cut(docsFile(t, "docs/middleware.md"), "\n## Endpoints\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if !ok {
		t.Fatal("no Endpoints section in docs/middleware.md")
	}
	for _, row := range []string{"| status (`/`", "| `/check/`", "| `" + healthserver.MetricsPath + "` |"} {
		if !strings.Contains(section, "\n"+row) {
			t.Errorf("the endpoints table has no row starting %q", row)
		}
	}
}

// The quick start's Go blocks, the first of README.md and of
// docs/middleware.md, are Example_quickStart's code between its markers,
// which the build checks: the same lines, comments and spacing aside, an
// error handling written { ... }.
func TestQuickStartIsAnExample(t *testing.T) {
	_, example, _ := strings.Cut(docsFile(t, "middleware/example_test.go"), "\t// quick start:\n")
	example, _, ok := strings.Cut(example, "\t// end of the quick start.")
	if !ok {
		t.Fatal("no quick start markers in Example_quickStart")
	}
	code := codeLines(example)
	for _, doc := range []string{"README.md", "docs/middleware.md"} {
		_, block, _ := strings.Cut(docsFile(t, doc), "```go\n")
		block, _, ok := strings.Cut(block, "```")
		if !ok {
			t.Fatalf("no Go block in %s", doc)
		}
		pattern := strings.ReplaceAll(regexp.QuoteMeta(codeLines(block)), regexp.QuoteMeta("{ ... }"), `\{[^{}]*\}`)
		if !regexp.MustCompile("^" + pattern + "$").MatchString(code) {
			t.Errorf("the quick start of %s is not Example_quickStart's code:\n%s\nwant:\n%s", doc, codeLines(block), code)
		}
	}
}

// codeLines returns the lines of Go code in s without comments, blank
// lines and runs of spaces.
func codeLines(s string) string {
	var out []string
	for line := range strings.Lines(s) {
		line, _, _ = strings.Cut(line, "//")
		if line = strings.Join(strings.Fields(line), " "); line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
