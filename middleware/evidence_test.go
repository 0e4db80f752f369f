package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// counters is a CounterSource a test sets.
type counters struct {
	mu  sync.Mutex
	c   middleware.Counters
	err error
}

func (s *counters) ReadCounters() (middleware.Counters, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c, s.err
}

func (s *counters) add(rx, tx uint64) {
	s.mu.Lock()
	s.c.RxBytes += rx
	s.c.TxBytes += tx
	s.mu.Unlock()
}

// TestEvidenceDecidesChecks runs a probe-mode monitor with traffic
// evidence: a busy tunnel passes and a silent one fails without the active
// check, which runs only when the counters say nothing; every answer says
// which way it was decided.
func TestEvidenceDecidesChecks(t *testing.T) {
	clock := clockwork.NewFakeClock()
	src := &counters{}
	var active atomic.Int32
	check := middleware.CheckerFunc(func(context.Context) error { active.Add(1); return errors.New("dial timeout") })
	var observed []middleware.Result
	var mu sync.Mutex
	mon, err := middleware.New(check, middleware.Config{
		Mode: middleware.ModeProbe, Clock: clock, Evidence: &middleware.Evidence{Source: src},
		Observer: middleware.ObserverFuncs{OnCheckFinished: func(r middleware.Result) {
			mu.Lock()
			observed = append(observed, r)
			mu.Unlock()
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// second lets a second pass in which the tunnel received rx and sent
	// tx bytes, then samples, as Run does every second.
	second := func(rx, tx uint64) {
		src.add(rx, tx)
		clock.Advance(time.Second)
		middleware.SampleEvidence(mon)
	}
	middleware.SampleEvidence(mon)
	get := func(path string) (int, string) {
		t.Helper()
		second(0, 0)
		rec := httptest.NewRecorder()
		mon.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}

	second(200_000, 100_000)
	code, body := get("/check/")
	if code != http.StatusOK || body != "pass (traffic evidence: received 200.00 kB in the last 2s)" {
		t.Errorf("busy: %d %q", code, body)
	}
	if code, body := get("/"); code != http.StatusOK || !strings.HasPrefix(body, "healthy (traffic evidence: received") {
		t.Errorf("status: %d %q", code, body)
	}
	for range 8 { // the tunnel dies: it sends, nothing comes back
		second(0, 20_000)
	}
	code, body = get("/check/?format=json")
	var js struct {
		Checks map[string][]struct {
			Status, Output, DecidedBy string
		}
	}
	if err := json.Unmarshal([]byte(body), &js); err != nil {
		t.Fatal(err)
	}
	c := js.Checks["tunnel:connectivity"][0]
	if code != http.StatusServiceUnavailable || c.DecidedBy != "evidence" || !strings.Contains(c.Output, "sending into silence: sent 160.00 kB in") {
		t.Errorf("dead: %d %+v", code, c)
	}
	if n := active.Load(); n != 0 {
		t.Errorf("the active check ran %d times while the counters decided", n)
	}

	// Counters that cannot be read decide nothing: the active check runs.
	src.mu.Lock()
	src.err = errors.New("no such device")
	src.mu.Unlock()
	code, body = get("/check/")
	if code != http.StatusServiceUnavailable || body != "fail: dial timeout" || active.Load() != 1 {
		t.Errorf("no counters: %d %q, %d active checks", code, body, active.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	var by []string
	for _, r := range observed {
		by = append(by, r.DecidedBy())
	}
	if strings.Join(by, ",") != "evidence,evidence,active" {
		t.Errorf("observer saw %v", by)
	}
}

// TestEvidenceSampledByRun: Run samples the counters every Interval, in
// probe mode too.
func TestEvidenceSampledByRun(t *testing.T) {
	clock := clockwork.NewFakeClock()
	reads := make(chan struct{}, 16)
	src := middleware.CounterSourceFunc(func() (middleware.Counters, error) {
		reads <- struct{}{}
		return middleware.Counters{}, nil
	})
	mon, err := middleware.New(middleware.CheckerFunc(func(context.Context) error { return nil }),
		middleware.Config{Mode: middleware.ModeProbe, Clock: clock, Evidence: &middleware.Evidence{Source: src, Interval: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mon.Run(ctx) }()
	<-reads // at once
	for range 3 {
		if err := clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		clock.Advance(500 * time.Millisecond)
		<-reads
	}
	stop()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
