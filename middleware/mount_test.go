package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/mux"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/gorilla"
)

// app is the user's own route, which the health endpoints must leave alone.
func app(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "app %s %s", r.Method, r.URL.Path)
}

func TestMountingUnderRouters(t *testing.T) {
	routers := map[string]func(m *middleware.Monitor) http.Handler{
		"ServeMux Mount": func(m *middleware.Monitor) http.Handler {
			mux := http.NewServeMux()
			mux.HandleFunc("/", app)
			middleware.Mount(mux, "/health", m)
			return mux
		},
		"wrapper around ServeMux": func(m *middleware.Monitor) http.Handler {
			mux := http.NewServeMux()
			mux.HandleFunc("/", app)
			return m.Middleware("/health/")(mux)
		},
		"gorilla Mount": func(m *middleware.Monitor) http.Handler {
			r := mux.NewRouter()
			gorilla.Mount(r, "health", m)
			r.PathPrefix("/").HandlerFunc(app)
			return r
		},
		"gorilla Mount, StrictSlash": func(m *middleware.Monitor) http.Handler {
			r := mux.NewRouter().StrictSlash(true)
			gorilla.Mount(r, "/health", m)
			r.PathPrefix("/").HandlerFunc(app)
			return r
		},
		"gorilla Use wrapper": func(m *middleware.Monitor) http.Handler {
			r := mux.NewRouter()
			r.PathPrefix("/").HandlerFunc(app)
			r.Use(mux.MiddlewareFunc(m.Middleware("/health")))
			return r
		},
		"chi Mount": func(m *middleware.Monitor) http.Handler {
			r := chi.NewRouter()
			r.Mount("/health", m.Handler())
			r.HandleFunc("/*", app)
			return r
		},
		"chi Use wrapper": func(m *middleware.Monitor) http.Handler {
			r := chi.NewRouter()
			r.Use(m.Middleware("/health"))
			r.HandleFunc("/*", app)
			return r
		},
	}
	for name, router := range routers {
		t.Run(name, func(t *testing.T) {
			m, err := middleware.New(passing(), middleware.Config{Mode: middleware.ModeProbe})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(router(m))
			defer srv.Close()
			for _, tc := range []struct{ path, body string }{
				{"/health", "unknown: no check has run yet; in probe mode checks run only when /check/ is called\n"},
				{"/health/", "unknown: no check has run yet; in probe mode checks run only when /check/ is called\n"},
				{"/health/check", "pass\n"},
				{"/health/check/", "pass\n"},
				{"/api/items", "app GET /api/items"},
				{"/", "app GET /"},
				{"/healthz", "app GET /healthz"},
			} {
				r := get(t, srv.URL+tc.path)
				if r.code == http.StatusMovedPermanently || r.code == http.StatusTemporaryRedirect {
					t.Errorf("%s: redirected", tc.path)
				}
				if r.body != tc.body {
					t.Errorf("%s: %d %q, want %q", tc.path, r.code, r.body, tc.body)
				}
			}
			// Below the prefix, only the four health paths are the
			// health endpoints': the rest is the router's. chi's Mount
			// of Handler() is the exception, documented: Handler answers
			// on every path, as serve's root does.
			for _, path := range []string{"/health/foo", "/health/check/x", "/health/checks"} {
				want := "app GET " + path
				if name == "chi Mount" {
					want = "healthy\n" // the checks above passed
				}
				if r := get(t, srv.URL+path); r.body != want {
					t.Errorf("%s: %d %q, want %q", path, r.code, r.body, want)
				}
			}
			if r := do(t, http.MethodPost, srv.URL+"/api/items"); r.body != "app POST /api/items" {
				t.Errorf("POST to the app: %d %q", r.code, r.body)
			}
			if r := do(t, http.MethodPost, srv.URL+"/health/check"); r.code != http.StatusMethodNotAllowed {
				t.Errorf("POST /health/check: %d", r.code)
			}
		})
	}
}

func TestPathsUnder(t *testing.T) {
	for prefix, want := range map[string]middleware.Paths{
		"":         {"/", "/", "/check", "/check/"},
		"/":        {"/", "/", "/check", "/check/"},
		"health":   {"/health", "/health/", "/health/check", "/health/check/"},
		"/health/": {"/health", "/health/", "/health/check", "/health/check/"},
		"/a/b":     {"/a/b", "/a/b/", "/a/b/check", "/a/b/check/"},
	} {
		if got := middleware.PathsUnder(prefix); got != want {
			t.Errorf("PathsUnder(%q) = %+v, want %+v", prefix, got, want)
		}
	}
}
