package middleware_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/preset"
)

// get answers a GET to path from h, as "code body".
func exampleGet(h http.Handler, path string) string {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return fmt.Sprintf("%d %s", w.Code, strings.TrimSpace(w.Body.String()))
}

// A sidecar for plain Docker: the loop checks the VPN and restarts it when it
// stays down, reproducing the reference health loop.
func ExampleNew() {
	checker := check.TLS{Address: "cloudflare.com"} // port 443 added
	cfg := preset.Reference()
	cfg.Heal = func(ctx context.Context) error {
		return nil // restart the VPN here
	}
	m, err := middleware.New(checker, cfg)
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	stop() // a real program runs until a signal: go m.Run(ctx)
	fmt.Println(m.Run(ctx), m.Mode(), m.Snapshot().Status)
	// Output: <nil> loop unknown
}

// For Kubernetes: the liveness probe drives the checks through /check/, with
// a server-side timeout a little under the probe's timeoutSeconds so that a
// slow check is recorded as a failure rather than abandoned.
func ExampleMonitor_Handler() {
	m, _ := middleware.New(check.Func(func(context.Context) error { return nil }),
		middleware.Config{Mode: middleware.ModeProbe})
	h := m.Handler()
	fmt.Println(exampleGet(h, "/"))
	fmt.Println(exampleGet(h, "/check/?timeout=9s"))
	fmt.Println(exampleGet(h, "/"))
	// Output:
	// 503 unknown: no check has run yet; in probe mode checks run only when /check/ is called
	// 200 pass
	// 200 healthy
}

// Wrap an existing router: the health paths are served, everything else goes
// to the router untouched.
func ExampleMonitor_Middleware() {
	m, _ := middleware.New(check.Func(func(context.Context) error { return nil }), middleware.Config{})
	api := http.NewServeMux()
	api.HandleFunc("/api/items", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "items") })
	h := m.Middleware("/health")(api)
	fmt.Println(exampleGet(h, "/health/check"))
	fmt.Println(exampleGet(h, "/api/items"))
	// Output:
	// 200 pass
	// 200 items
}

// The quick start of README.md and docs/middleware.md, whose Go blocks are
// the code between its markers (TestQuickStartIsAnExample): a rename that
// breaks it breaks this example's build.
func Example_quickStart() {
	ctx, stop := context.WithCancel(context.Background())
	stop() // a real program runs until a signal; here Run returns at once
	// quick start:
	tunnel := check.TLS{Address: "cloudflare.com"} // package middleware/check: a dial and a verified TLS handshake
	m, err := middleware.New(tunnel, middleware.Config{Mode: middleware.ModeAuto})
	if err != nil {
		panic(err) // names the bad Config field
	}
	go m.Run(ctx) // the loop; New starts nothing
	mux := http.NewServeMux()
	middleware.Mount(mux, "/health", m) // GET /health (the state), GET /health/check/ (check now)
	// end of the quick start.
	fmt.Println(exampleGet(mux, "/health"))
	// Output: 503 unknown: no check has run yet
}

func ExampleMount() {
	m, _ := middleware.New(check.Func(func(context.Context) error { return nil }), middleware.Config{})
	mux := http.NewServeMux()
	middleware.Mount(mux, "/health", m)
	fmt.Println(exampleGet(mux, "/health/check/"))
	fmt.Println(exampleGet(mux, "/health"))
	// Output:
	// 200 pass
	// 200 healthy
}

// Probe is the on-demand check without HTTP.
func ExampleMonitor_Probe() {
	m, _ := middleware.New(check.Func(func(context.Context) error {
		return fmt.Errorf("tls cloudflare.com:443: handshake: i/o timeout")
	}), middleware.Config{Mode: middleware.ModeProbe})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := m.Probe(ctx)
	fmt.Println(r.Passed(), r.Err, m.Snapshot().Status)
	// Output: false tls cloudflare.com:443: handshake: i/o timeout unhealthy
}

// Status ?wait= answers as soon as the state is healthy, here at once.
func ExampleMonitor_StatusHandler() {
	m, _ := middleware.New(check.Func(func(context.Context) error { return nil }), middleware.Config{})
	m.Probe(context.Background())
	fmt.Println(exampleGet(m.StatusHandler(), "/?wait=10s"))
	// Output: 200 healthy
}

func ExampleMonitor_CheckHandler() {
	m, _ := middleware.New(check.Func(func(context.Context) error { panic("bug in a custom check") }), middleware.Config{})
	fmt.Println(exampleGet(m.CheckHandler(), "/?timeout=5s"))
	// Output: 503 fail: check panicked: bug in a custom check
}

func ExamplePathsUnder() {
	fmt.Printf("%+v\n", middleware.PathsUnder("/health"))
	fmt.Println(middleware.PathsUnder("/").All())
	// Output:
	// {Status:/health StatusSlash:/health/ Check:/health/check CheckSlash:/health/check/}
	// [/ / /check /check/]
}

func ExampleMode_UnmarshalText() {
	var mode middleware.Mode
	err := mode.UnmarshalText([]byte("auto"))
	fmt.Println(mode, err)
	// Output: auto <nil>
}

func ExampleNewSlogObserver() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{} // keep the output stable
			}
			return a
		},
	}))
	m, _ := middleware.New(check.Func(func(context.Context) error { return fmt.Errorf("refused") }),
		middleware.Config{Mode: middleware.ModeProbe, Observer: middleware.NewSlogObserver(logger)})
	m.Probe(context.Background())
	// Output:
	// level=WARN msg="check failed" source=probe decided_by=active err=refused
	// level=WARN msg="health state changed" from=unknown to=unhealthy mode=probe consecutive_failures=1 err=refused
}

// A configuration read from a file is checked before any checker exists.
func ExampleConfig_Validate() {
	cfg := middleware.Config{Mode: middleware.ModeProbe, Period: -time.Second, Timeouts: middleware.Ladder{0}}
	fmt.Println(cfg.Validate())
	fmt.Println(middleware.Config{}.Validate())
	// Output:
	// Period: -1s is negative
	// Timeouts[0]: 0s is not positive
	// <nil>
}
