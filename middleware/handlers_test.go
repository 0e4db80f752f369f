package middleware_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// server serves m.Handler() on a real HTTP server on loopback.
func server(t *testing.T, checker check.Checker, cfg middleware.Config) (*middleware.Monitor, *httptest.Server) {
	t.Helper()
	m, err := middleware.New(checker, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	return m, srv
}

type response struct {
	code   int
	header http.Header
	body   string
}

func get(t *testing.T, url string, header ...string) response {
	t.Helper()
	return do(t, http.MethodGet, url, header...)
}

func do(t *testing.T, method, url string, header ...string) response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		return errors.New("redirected")
	}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, string(body)}
}

func passing() check.Checker {
	return check.Func(func(context.Context) error { return nil })
}

func failing(err error) check.Checker {
	return check.Func(func(context.Context) error { return err })
}

func TestStatusBeforeAnyResult(t *testing.T) {
	for _, tc := range []struct {
		mode middleware.Mode
		want string
	}{
		{middleware.ModeLoop, "unknown: no check has run yet\n"},
		{middleware.ModeProbe, "unknown: no check has run yet; in probe mode checks run only when /check/ is called\n"},
	} {
		_, srv := server(t, passing(), middleware.Config{Mode: tc.mode})
		r := get(t, srv.URL+"/")
		if r.code != http.StatusServiceUnavailable || r.body != tc.want {
			t.Errorf("%v: %d %q, want 503 %q", tc.mode, r.code, r.body, tc.want)
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q", r.header.Get("Cache-Control"))
		}
	}
}

func TestStatusReportsProbeDrivenResults(t *testing.T) {
	var mu sync.Mutex
	var next error
	checker := check.Func(func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		return next
	})
	set := func(err error) { mu.Lock(); next = err; mu.Unlock() }
	_, srv := server(t, checker, middleware.Config{Mode: middleware.ModeProbe, FailureThreshold: 2})

	steps := []struct {
		err        error
		checkCode  int
		checkBody  string
		statusCode int
		statusBody string
	}{
		{nil, 200, "pass\n", 200, "healthy\n"},
		{errDown, 503, "fail: tunnel down\n", 200, "healthy, but the last 1 check(s) failed: tunnel down\n"},
		{errDown, 503, "fail: tunnel down\n", 503, "unhealthy after 2 failed check(s): tunnel down\n"},
		{nil, 200, "pass\n", 200, "healthy\n"},
	}
	for i, s := range steps {
		set(s.err)
		if r := get(t, srv.URL+"/check/"); r.code != s.checkCode || r.body != s.checkBody {
			t.Errorf("step %d /check/: %d %q, want %d %q", i, r.code, r.body, s.checkCode, s.checkBody)
		}
		if r := get(t, srv.URL+"/"); r.code != s.statusCode || r.body != s.statusBody {
			t.Errorf("step %d /: %d %q, want %d %q", i, r.code, r.body, s.statusCode, s.statusBody)
		}
	}
}

func TestCheckWithoutTrailingSlashIsNotRedirected(t *testing.T) {
	_, srv := server(t, passing(), middleware.Config{})
	if r := get(t, srv.URL+"/check"); r.code != 200 || r.body != "pass\n" {
		t.Errorf("/check: %d %q", r.code, r.body)
	}
}

func TestHeadGetsStatusWithoutBody(t *testing.T) {
	m, srv := server(t, passing(), middleware.Config{})
	if r := do(t, http.MethodHead, srv.URL+"/"); r.code != 503 || r.body != "" {
		t.Errorf("HEAD / before a result: %d %q", r.code, r.body)
	}
	m.Probe(context.Background())
	if r := do(t, http.MethodHead, srv.URL+"/"); r.code != 200 || r.body != "" {
		t.Errorf("HEAD / when healthy: %d %q", r.code, r.body)
	}
}

func TestJSONFollowsHealthCheckDraft(t *testing.T) {
	m, srv := server(t, failing(errDown), middleware.Config{Mode: middleware.ModeProbe})
	m.Probe(context.Background())
	for _, how := range []struct {
		query  string
		header []string
	}{
		{"?format=json", nil},
		{"", []string{"Accept", "application/health+json"}},
		{"", []string{"Accept", "text/html, application/json;q=0.9"}},
	} {
		r := get(t, srv.URL+"/"+how.query, how.header...)
		if ct := r.header.Get("Content-Type"); ct != "application/health+json" {
			t.Errorf("%v: Content-Type %q", how, ct)
		}
		var body struct {
			Status string `json:"status"`
			Output string `json:"output"`
			State  string `json:"state"`
			Mode   string `json:"mode"`
			Checks map[string][]struct {
				Status              string   `json:"status"`
				Time                string   `json:"time"`
				ObservedValue       *float64 `json:"observedValue"`
				ObservedUnit        string   `json:"observedUnit"`
				Output              string   `json:"output"`
				ConsecutiveFailures int      `json:"consecutiveFailures"`
			} `json:"checks"`
		}
		if err := json.Unmarshal([]byte(r.body), &body); err != nil {
			t.Fatalf("%v: %v in %s", how, err, r.body)
		}
		c := body.Checks["tunnel:connectivity"]
		if r.code != 503 || body.Status != "fail" || body.State != "unhealthy" || body.Mode != "probe" ||
			!strings.Contains(body.Output, "tunnel down") || len(c) != 1 || c[0].Status != "fail" ||
			c[0].Output != "tunnel down" || c[0].ConsecutiveFailures != 1 || c[0].ObservedUnit != "ms" ||
			c[0].ObservedValue == nil || c[0].Time == "" {
			t.Errorf("%v: %d %s", how, r.code, r.body)
		}
	}
	if r := get(t, srv.URL+"/check/?format=json"); r.code != 503 || !strings.Contains(r.body, `"status": "fail"`) {
		t.Errorf("/check/ JSON: %d %s", r.code, r.body)
	}
	if r := get(t, srv.URL+"/?format=text", "Accept", "application/json"); r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("format=text did not win over Accept: %q", r.header.Get("Content-Type"))
	}
}

func TestHideErrorsKeepsTextFromClientsButNotFromObservers(t *testing.T) {
	secret := errors.New("dial tcp 10.64.0.1:443: secret internal address")
	logged := make(chan error, 4)
	cfg := middleware.Config{
		Mode:       middleware.ModeProbe,
		HideErrors: true,
		Observer:   middleware.ObserverFuncs{OnCheckFinished: func(r middleware.Result) { logged <- r.Err }},
	}
	_, srv := server(t, failing(secret), cfg)
	for _, path := range []string{"/check/", "/check/?format=json", "/", "/?format=json"} {
		r := get(t, srv.URL+path)
		if strings.Contains(r.body, "secret") || !strings.Contains(r.body, "details hidden") {
			t.Errorf("%s leaks or hides nothing: %s", path, r.body)
		}
	}
	if err := <-logged; !errors.Is(err, secret) {
		t.Errorf("observer got %v", err)
	}
}

func TestBadInput(t *testing.T) {
	_, srv := server(t, passing(), middleware.Config{})
	for _, tc := range []struct {
		method, path string
		code         int
		mention      string
	}{
		{http.MethodPost, "/", 405, "POST"},
		{http.MethodPut, "/check/", 405, "PUT"},
		{http.MethodDelete, "/check", 405, "DELETE"},
		{http.MethodGet, "/?wait=soon", 400, "wait"},
		{http.MethodGet, "/?wait=-1s", 400, "wait"},
		{http.MethodGet, "/?wait=1e300", 400, "wait"},
		{http.MethodGet, "/check/?timeout=x", 400, "timeout"},
		{http.MethodGet, "/check/?timeout=-5", 400, "timeout"},
		{http.MethodGet, "/?format=xml", 400, "format"},
		{http.MethodGet, "/check/?format=yaml", 400, "format"},
		{http.MethodGet, "/?wait=%zz", 400, "malformed"},
		{http.MethodGet, "/?wait=NaN", 400, "not a duration"},
		{http.MethodGet, "/check/?timeout=Inf", 400, "not a duration"},
	} {
		r := do(t, tc.method, srv.URL+tc.path)
		if r.code != tc.code || !strings.Contains(r.body, tc.mention) {
			t.Errorf("%s %s: %d %q, want %d naming %q", tc.method, tc.path, r.code, r.body, tc.code, tc.mention)
		}
		if tc.code == 405 && r.header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q", tc.method, tc.path, r.header.Get("Allow"))
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s %s: Cache-Control %q, want no-store, as every answer has", tc.method, tc.path, cc)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg     middleware.Config
		mention string
	}{
		{middleware.Config{Mode: 7}, "Mode"},
		{middleware.Config{Period: -time.Second}, "Period"},
		{middleware.Config{Timeouts: []time.Duration{time.Second, 0}}, "Timeouts[1]"},
		{middleware.Config{FailureThreshold: -1}, "FailureThreshold"},
		{middleware.Config{MaxWait: -1}, "MaxWait"},
		{middleware.Config{MaxCheckTimeout: -1}, "MaxCheckTimeout"},
		{middleware.Config{MinCheckInterval: -1}, "MinCheckInterval"},
		{middleware.Config{RetryWait: -1}, "RetryWait"},
		{middleware.Config{HealBackoff: middleware.HealBackoff{Step: -1}}, "HealBackoff"},
	} {
		if _, err := middleware.New(passing(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%+v: error %v, want one naming %s", tc.cfg, err, tc.mention)
		}
	}
	if _, err := middleware.New(nil, middleware.Config{}); err == nil {
		t.Error("nil checker accepted")
	}
	var m middleware.Mode
	if err := m.UnmarshalText([]byte("sometimes")); err == nil || !strings.Contains(err.Error(), "sometimes") {
		t.Errorf("Mode.UnmarshalText: %v", err)
	}
	for _, name := range []string{"loop", "probe", "auto"} {
		if err := m.UnmarshalText([]byte(name)); err != nil || m.String() != name {
			t.Errorf("Mode.UnmarshalText(%q) = %v, %v", name, m, err)
		}
	}
}

func TestCheckThatPanicsIsAFailure(t *testing.T) {
	m, srv := server(t, check.Func(func(context.Context) error { panic("boom") }), middleware.Config{})
	r := get(t, srv.URL+"/check/")
	if r.code != 503 || !strings.Contains(r.body, "check panicked: boom") {
		t.Errorf("/check/: %d %q", r.code, r.body)
	}
	if s := m.Snapshot(); !errors.Is(s.Last.Err, check.ErrPanicked) {
		t.Errorf("recorded %v", s.Last.Err)
	}
}

// fakeServer is server with a fake clock, in probe mode so that no loop
// timer counts among the clock's waiters.
func fakeServer(t *testing.T, checker check.Checker, cfg middleware.Config) (*middleware.Monitor, *httptest.Server, *clockwork.FakeClock) {
	t.Helper()
	clock := clockwork.NewFakeClockAt(epoch)
	cfg.Clock = clock
	cfg.Mode = middleware.ModeProbe
	m, srv := server(t, checker, cfg)
	return m, srv, clock
}

// getAsync issues a GET and delivers the response on the returned channel.
func getAsync(t *testing.T, url string) <-chan response {
	ch := make(chan response, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- response{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		ch <- response{resp.StatusCode, resp.Header, string(body)}
	}()
	return ch
}

func receive(t *testing.T, ch <-chan response) response {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(hangGuard):
		t.Fatal("no response")
		return response{}
	}
}

func waitForTimers(t *testing.T, clock *clockwork.FakeClock, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := clock.BlockUntilContext(ctx, n); err != nil {
		t.Fatalf("waiting for %d timers: %v", n, err)
	}
}

func TestStatusWaitAnswersOnceHealthy(t *testing.T) {
	m, srv, clock := fakeServer(t, passing(), middleware.Config{})
	pending := getAsync(t, srv.URL+"/?wait=30s")
	waitForTimers(t, clock, 1) // the request is waiting
	m.Probe(context.Background())
	if r := receive(t, pending); r.code != 200 || r.body != "healthy\n" {
		t.Errorf("%d %q", r.code, r.body)
	}
}

func TestStatusWaitAnswersWithTheStateAtTheDeadline(t *testing.T) {
	m, srv, clock := fakeServer(t, failing(errDown), middleware.Config{})
	m.Probe(context.Background())
	pending := getAsync(t, srv.URL+"/?wait=30")
	// A fake-clock context's timer stays registered after cancel: the
	// probe's check timeout (it had no deadline) and MaxCheckTimeout
	// timers count too.
	waitForTimers(t, clock, 3)
	clock.Advance(30 * time.Second)
	if r := receive(t, pending); r.code != 503 || r.body != "unhealthy after 1 failed check(s): tunnel down\n" {
		t.Errorf("%d %q", r.code, r.body)
	}
}

func TestStatusWaitIsCappedByMaxWait(t *testing.T) {
	_, srv, clock := fakeServer(t, passing(), middleware.Config{MaxWait: 10 * time.Second})
	pending := getAsync(t, srv.URL+"/?wait=1h")
	waitForTimers(t, clock, 1)
	clock.Advance(10 * time.Second)
	if r := receive(t, pending); r.code != 503 || !strings.HasPrefix(r.body, "unknown") {
		t.Errorf("%d %q", r.code, r.body)
	}
}

func TestCheckTimeoutIsAServerSideDeadlineRecordedAsFailure(t *testing.T) {
	hang := check.Func(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	for _, tc := range []struct {
		query    string
		timeouts []time.Duration // the monitor's check timeout
		advance  time.Duration
		recorded bool
	}{
		{"?timeout=5s", []time.Duration{5 * time.Second}, 5 * time.Second, true},
		{"?timeout=1h", nil, 20 * time.Second, true}, // capped by MaxCheckTimeout
		// Shorter than the monitor's own check timeout (10 s): the caller
		// is told, the tunnel is not blamed.
		{"?timeout=5s", nil, 5 * time.Second, false},
		{"?timeout=1ms", nil, time.Millisecond, false}, // under the 10 ms it is measured to
	} {
		m, srv, clock := fakeServer(t, hang, middleware.Config{Timeouts: tc.timeouts, MaxCheckTimeout: 20 * time.Second})
		pending := getAsync(t, srv.URL+"/check/"+tc.query)
		// The request's deadline and the check's MaxCheckTimeout.
		waitForTimers(t, clock, 2)
		clock.Advance(tc.advance)
		r := receive(t, pending)
		if r.code != 503 || !strings.Contains(r.body, "timed out") {
			t.Errorf("%s: %d %q", tc.query, r.code, r.body)
		}
		if strings.Contains(r.body, "not recorded") == tc.recorded {
			t.Errorf("%s: %q, recorded %v", tc.query, r.body, tc.recorded)
		}
		want, failures := middleware.StatusUnhealthy, 1
		if !tc.recorded {
			want, failures = middleware.StatusUnknown, 0
		}
		if s := m.Snapshot(); s.Status != want || s.ConsecutiveFailures != failures {
			t.Errorf("%s: state %v with %d failures, want %v with %d", tc.query, s.Status, s.ConsecutiveFailures, want, failures)
		}
		// The trap of a probe's ?timeout= under the check timeout: its
		// failures are never recorded, so the status says so.
		status := get(t, srv.URL+"/")
		warned := strings.Contains(status.body, "; warning: 1 /check/ failure(s) since the last recorded result came at a deadline of ") &&
			strings.Contains(status.body, "under the 10s check timeout, and were not recorded: give the monitor the probe's timeout")
		if warned == tc.recorded {
			t.Errorf("%s: status %q, warned of unrecorded failures %v, want %v", tc.query, status.body, warned, !tc.recorded)
		}
	}
}

func TestMinCheckIntervalServesARecentResultAgain(t *testing.T) {
	var runs int
	var mu sync.Mutex
	count := check.Func(func(context.Context) error { mu.Lock(); runs++; mu.Unlock(); return nil })
	_, srv, clock := fakeServer(t, count, middleware.Config{MinCheckInterval: 10 * time.Second})
	for range 3 {
		if r := get(t, srv.URL+"/check/"); r.code != 200 {
			t.Fatalf("%d %q", r.code, r.body)
		}
	}
	clock.Advance(10 * time.Second)
	get(t, srv.URL+"/check/")
	mu.Lock()
	defer mu.Unlock()
	if runs != 2 {
		t.Errorf("the check ran %d times, want 2 (once, then once after the interval)", runs)
	}
}

func TestRequestCancelledByTheServerStillGetsAnAnswer(t *testing.T) {
	// On shutdown a server cancels its requests while the clients still
	// wait: they must read a failure, not net/http's empty 200.
	hang := check.Func(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	started := make(chan struct{})
	m, err := middleware.New(hang, middleware.Config{Mode: middleware.ModeProbe,
		Observer: middleware.ObserverFuncs{OnCheckStarted: func(middleware.CheckStart) { close(started) }}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/check/", nil).WithContext(ctx))
	}()
	<-started
	cancel()
	<-done
	if w.Code != http.StatusServiceUnavailable || !strings.HasPrefix(w.Body.String(), "fail: ") {
		t.Errorf("%d %q, want a 503 failure", w.Code, w.Body.String())
	}
}

func TestAcceptHeaderIsParsed(t *testing.T) {
	_, srv := server(t, passing(), middleware.Config{})
	for _, tc := range []struct {
		accept string
		json   bool
	}{
		{"", false},
		{"*/*", false},
		{"application/json", true},
		{"Application/JSON", true},
		{"application/health+json", true},
		{"application/json;q=0", false},
		{"application/json; q=0.0, text/plain", false},
		{"application/jsonfoo", false},
		{"application/json-seq", false},
		{"text/plain;q=0.5, application/json", true},
		{"text/plain, application/json;q=0.5", false},
		{"application/json, */*", true},
		{"application/json;q=0.8, */*", false},
		{"text/html, application/json;q=0.9", true},
		{"application/json;q=nonsense", false},
	} {
		r := get(t, srv.URL+"/check/", "Accept", tc.accept)
		if got := r.header.Get("Content-Type") == "application/health+json"; got != tc.json {
			t.Errorf("Accept %q: %s, want JSON %v", tc.accept, r.header.Get("Content-Type"), tc.json)
		}
	}
}

func FuzzAcceptHeader(f *testing.F) {
	for _, s := range []string{"application/json;q=0.5, text/*;q=0.6", "*/*;q=", ";;,;q=1e9", "application/*"} {
		f.Add(s)
	}
	m, err := middleware.New(passing(), middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		f.Fatal(err)
	}
	h := m.StatusHandler()
	f.Fuzz(func(t *testing.T, accept string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if ct := w.Header().Get("Content-Type"); ct != "application/health+json" && ct != "text/plain; charset=utf-8" {
			t.Errorf("Accept %q: Content-Type %q", accept, ct)
		}
	})
}

// The status answer is rendered once per state: every change of the state
// must show in the next answer, in both formats, with the same headers.
func TestStatusAnswerFollowsEveryChange(t *testing.T) {
	var fail atomic.Bool
	checker := check.Func(func(context.Context) error {
		if fail.Load() {
			return errDown
		}
		return nil
	})
	m, srv := server(t, checker, middleware.Config{Mode: middleware.ModeProbe, FailureThreshold: 2})
	steps := []struct {
		fail       bool
		code       int
		text, json string
	}{
		{false, 200, "healthy\n", `"status": "pass"`},
		{true, 200, "healthy, but the last 1 check(s) failed: tunnel down\n", `"status": "warn"`},
		{true, 503, "unhealthy after 2 failed check(s): tunnel down\n", `"consecutiveFailures": 2`},
		{false, 200, "healthy\n", `"consecutiveFailures": 0`},
	}
	for i, step := range steps {
		fail.Store(step.fail)
		m.Probe(context.Background())
		for range 2 { // the second answer is the kept one
			text, js := get(t, srv.URL+"/"), get(t, srv.URL+"/?format=json")
			if text.code != step.code || text.body != step.text {
				t.Errorf("step %d text: %d %q, want %d %q", i, text.code, text.body, step.code, step.text)
			}
			if js.code != step.code || !strings.Contains(js.body, step.json) {
				t.Errorf("step %d JSON: %d %s, want %d with %s", i, js.code, js.body, step.code, step.json)
			}
			wantHeaders(t, text.header, "text/plain; charset=utf-8", "nosniff")
			wantHeaders(t, js.header, "application/health+json", "")
		}
	}
	head := do(t, http.MethodHead, srv.URL+"/?format=json")
	if head.code != 200 || head.body != "" {
		t.Errorf("HEAD: %d %q", head.code, head.body)
	}
	wantHeaders(t, head.header, "application/health+json", "")
}

// A failure cut short by its caller's deadline is not recorded, yet the
// status says so: a change of the state that wakes nobody must show too.
func TestStatusAnswerShowsUnrecordedFailures(t *testing.T) {
	blocked := make(chan struct{})
	t.Cleanup(func() { close(blocked) })
	checker := check.Func(func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-blocked:
			return nil
		}
	})
	_, srv := server(t, checker, middleware.Config{Mode: middleware.ModeProbe})
	if r := get(t, srv.URL+"/"); strings.Contains(r.body, "not recorded") {
		t.Fatalf("before: %q", r.body)
	}
	if r := get(t, srv.URL+"/check/?timeout=1ms"); r.code != 503 {
		t.Fatalf("/check/ with a short deadline: %d %q", r.code, r.body)
	}
	if r := get(t, srv.URL+"/"); !strings.Contains(r.body, "were not recorded") {
		t.Errorf("after an unrecorded failure: %q", r.body)
	}
}

// A loop stuck in a check that ignores its timeout changes nothing in the
// state, yet the state turns stale a Period past what the loop owed: the
// kept answer, read without a lock, must not outlive that.
func TestStatusAnswerTurnsStaleOnTheClock(t *testing.T) {
	r := stuckLoop(t)
	h := r.m.StatusHandler()
	status := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		return w
	}
	for range 2 { // the second answer is the kept one
		if w := status(); w.Code != 200 || w.Body.String() != "healthy\n" {
			t.Fatalf("at 5 s: %d %q", w.Code, w.Body.String())
		}
	}
	waitForTimers(t, r.clock, 1) // the stuck check's timeout
	r.clock.Advance(7*time.Second + time.Millisecond)
	if w := status(); w.Code != 503 || !strings.HasPrefix(w.Body.String(), "stale: ") {
		t.Errorf("at 12 s, a Period past due: %d %q, want stale", w.Code, w.Body.String())
	}
}

func wantHeaders(t *testing.T, h http.Header, contentType, sniff string) {
	t.Helper()
	if h.Get("Cache-Control") != "no-store" || h.Get("Content-Type") != contentType || h.Get("X-Content-Type-Options") != sniff {
		t.Errorf("headers %v, want Cache-Control no-store, Content-Type %q, X-Content-Type-Options %q", h, contentType, sniff)
	}
}

// The status endpoint answers a kept state without allocating, in both
// formats: what lets it keep up with the handler it sits in.
func TestStatusAnswersWithoutAllocating(t *testing.T) {
	m, err := middleware.New(failing(errors.New("down")), middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		t.Fatal(err)
	}
	m.Probe(context.Background())
	h := m.StatusHandler()
	for _, path := range []string{"/", "/?format=json", "/?format=text"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		w := newDiscard()
		if n := testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, req) }); n > 0 {
			t.Errorf("GET %s: %.1f allocations per request", path, n)
		}
	}
}

// A heal that starts and ends records no result, yet the status names it
// while it runs: the kept answer, read without a lock, must not outlive
// either.
func TestStatusAnswerShowsAHealStartAndEnd(t *testing.T) {
	m, err := middleware.New(failing(errDown), middleware.Config{Mode: middleware.ModeProbe})
	if err != nil {
		t.Fatal(err)
	}
	m.Probe(context.Background())
	before := status(t, m, false).Body.String()
	if again := status(t, m, false).Body.String(); again != before || strings.Contains(before, "healing") {
		t.Fatalf("before the heal: %q, then %q", before, again)
	}
	heal := &middleware.HealStart{Time: time.Now(), Attempt: 1, Timeout: time.Minute}
	middleware.SetHealing(m, heal)
	if got := status(t, m, false).Body.String(); !strings.Contains(got, "; healing since ") {
		t.Errorf("while healing: %q", got)
	}
	middleware.EndHealing(m, heal)
	if got := status(t, m, false).Body.String(); got != before {
		t.Errorf("after the heal: %q, want %q", got, before)
	}
}
