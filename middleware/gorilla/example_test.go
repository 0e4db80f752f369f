package gorilla_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gorilla/mux"

	"github.com/tunnelprobe/tunnelprobe/middleware"
	"github.com/tunnelprobe/tunnelprobe/middleware/check"
	"github.com/tunnelprobe/tunnelprobe/middleware/gorilla"
)

func ExampleMount() {
	m, _ := middleware.New(check.Func(func(context.Context) error { return nil }), middleware.Config{})
	r := mux.NewRouter().StrictSlash(true)
	gorilla.Mount(r, "/health", m)
	for _, path := range []string{"/health/check", "/health/check/", "/health"} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Print(path, " ", w.Code, " ", w.Body.String())
	}
	// Output:
	// /health/check 200 pass
	// /health/check/ 200 pass
	// /health 200 healthy
}
