// Package gorilla mounts tunnelprobe's health endpoints on a gorilla/mux
// router. It lives apart from package middleware so that users of other
// routers do not depend on gorilla/mux.
package gorilla

import (
	"net/http"
	"slices"

	"github.com/gorilla/mux"
	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// Mount registers m's endpoints on r under prefix, at the exact paths of
// [middleware.PathsUnder]. It matches paths itself rather than through r.Handle,
// so a router with StrictSlash(true) answers both spellings without a
// redirect.
func Mount(r *mux.Router, prefix string, m *middleware.Monitor) {
	paths := middleware.PathsUnder(prefix).All()
	r.MatcherFunc(func(req *http.Request, _ *mux.RouteMatch) bool {
		return slices.Contains(paths, req.URL.Path)
	}).Handler(m.Middleware(prefix)(http.NotFoundHandler()))
}
