package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// discard is a ResponseWriter that keeps nothing, so the benchmarks measure
// the handlers, not a recorder.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

func newDiscard() *discard { return &discard{h: make(http.Header)} }

func userRouter() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/items", func(http.ResponseWriter, *http.Request) {})
	return mux
}

func BenchmarkStatusHandler(b *testing.B) {
	m, err := middleware.New(passing(), middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		b.Fatal(err)
	}
	m.Probe(context.Background())
	h := m.Handler()
	for _, path := range []string{"/", "/?format=json"} {
		b.Run(path, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			w := newDiscard()
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
}

// BenchmarkPassThrough compares a request to the user's router through the
// health middleware with the same request to the bare router; the
// difference is what the wrapper adds.
func BenchmarkPassThrough(b *testing.B) {
	m, err := middleware.New(passing(), middleware.Config{})
	if err != nil {
		b.Fatal(err)
	}
	routers := []struct {
		name string
		h    http.Handler
	}{
		{"bare", userRouter()},
		{"wrapped", m.Middleware("/health")(userRouter())},
	}
	for _, r := range routers {
		b.Run(r.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/api/items", nil)
			w := newDiscard()
			b.ReportAllocs()
			for b.Loop() {
				r.h.ServeHTTP(w, req)
			}
		})
	}
}

func TestPassThroughAddsNoAllocations(t *testing.T) {
	m, err := middleware.New(passing(), middleware.Config{})
	if err != nil {
		t.Fatal(err)
	}
	bare, wrapped := userRouter(), m.Middleware("/health")(userRouter())
	req := httptest.NewRequest(http.MethodGet, "/api/items", nil)
	w := newDiscard()
	a := testing.AllocsPerRun(1000, func() { bare.ServeHTTP(w, req) })
	b := testing.AllocsPerRun(1000, func() { wrapped.ServeHTTP(w, req) })
	if b > a {
		t.Errorf("the wrapper adds %.1f allocations per request", b-a)
	}
}

// BenchmarkCheckStorm sends 10,000 concurrent /check/ requests at a check
// that finishes only once all of them have joined: one execution serves
// them all. B/op is the memory the storm took.
func BenchmarkCheckStorm(b *testing.B) {
	const callers = 10_000
	var runs atomic.Int64
	var joined atomic.Int64
	allJoined := make(chan struct{})
	var once sync.Once
	checker := check.Func(func(ctx context.Context) error {
		runs.Add(1)
		select {
		case <-allJoined:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	m, err := middleware.New(checker, middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		b.Fatal(err)
	}
	middleware.SetJoinHook(m, func() {
		if joined.Add(1) == callers {
			once.Do(func() { close(allJoined) })
		}
	})
	h := m.Handler()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		runs.Store(0)
		joined.Store(0)
		allJoined = make(chan struct{})
		once = sync.Once{}
		b.StartTimer()
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				w := newDiscard()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/check/", nil))
			})
		}
		wg.Wait()
		if n := runs.Load(); n != 1 {
			b.Fatalf("%d executions for %d callers", n, callers)
		}
	}
	b.ReportMetric(callers, "callers/op")
}
