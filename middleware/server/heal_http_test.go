package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tunnelprobe/tunnelprobe/middleware/server"
)

// controlAPI is a VPN client's control server as a heal meets it: it
// records each request, and answers with status, or hangs until the
// request ends when status is 0.
type controlAPI struct {
	mu      sync.Mutex
	got     []string
	status  int
	arrived chan struct{} // if set, told of each request
}

func (c *controlAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.got = append(c.got, r.Method+" "+r.URL.Path+" "+string(b)+" key="+r.Header.Get("X-API-Key")+" type="+r.Header.Get("Content-Type"))
	status := c.status
	c.mu.Unlock()
	if c.arrived != nil {
		c.arrived <- struct{}{}
	}
	if status == 0 {
		<-r.Context().Done()
		return
	}
	w.WriteHeader(status)
	io.WriteString(w, `{"outcome":"stopped"}`)
}

func (c *controlAPI) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

func mustParse(t *testing.T, s string) server.HealRequest {
	t.Helper()
	r, err := server.ParseHealRequest(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestHealHTTPSendsTheRequestsInOrder(t *testing.T) {
	t.Parallel()
	api := &controlAPI{status: http.StatusOK}
	srv := httptest.NewServer(api)
	defer srv.Close()
	stop := mustParse(t, "PUT "+srv.URL+`/v1/vpn/status {"status":"stopped"}`)
	run := mustParse(t, "PUT "+srv.URL+`/v1/vpn/status {"status":"running"}`)
	for _, r := range []*server.HealRequest{&stop, &run} {
		r.Header = http.Header{"X-Api-Key": {"k1"}}
	}
	if err := server.HealHTTP([]server.HealRequest{stop, run}, nil, nil)(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`PUT /v1/vpn/status {"status":"stopped"} key=k1 type=application/json`,
		`PUT /v1/vpn/status {"status":"running"} key=k1 type=application/json`,
	}
	if got := api.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the control API got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestHealHTTPStopsAtTheFirstRefusal(t *testing.T) {
	t.Parallel()
	api := &controlAPI{status: http.StatusUnauthorized}
	srv := httptest.NewServer(api)
	defer srv.Close()
	err := server.HealHTTP([]server.HealRequest{mustParse(t, "POST "+srv.URL+"/restart"), mustParse(t, "POST "+srv.URL+"/second")}, nil, nil)(context.Background())
	if err == nil || !strings.Contains(err.Error(), "POST "+srv.URL+"/restart") || !strings.Contains(err.Error(), "401") {
		t.Errorf("heal returned %v, want an error naming the refused request and its status", err)
	}
	if got := api.requests(); len(got) != 1 {
		t.Errorf("the control API got %q, want the first request only", got)
	}
}

func TestHealHTTPEndsWithItsContext(t *testing.T) {
	t.Parallel()
	api := &controlAPI{arrived: make(chan struct{}, 1)} // hangs
	srv := httptest.NewServer(api)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	heal := server.HealHTTP([]server.HealRequest{mustParse(t, "POST "+srv.URL+"/restart")}, nil, nil)
	done := make(chan error, 1)
	go func() { done <- heal(ctx) }()
	<-api.arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("heal returned %v, want context.Canceled", err)
	}
}

// A redirect is an answer, not a heal: following it would turn the PUT
// into a GET without its body and carry the API key to another host.
func TestHealHTTPFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	elsewhere := &controlAPI{status: http.StatusOK}
	other := httptest.NewServer(elsewhere)
	defer other.Close()
	srv := httptest.NewServer(http.RedirectHandler(other.URL+"/v1/vpn/status", http.StatusSeeOther))
	defer srv.Close()
	r := mustParse(t, "PUT "+srv.URL+`/v1/vpn/status {"status":"stopped"}`)
	r.Header = http.Header{"X-Api-Key": {"k1"}}
	err := server.HealHTTP([]server.HealRequest{r}, nil, nil)(context.Background())
	if err == nil || !strings.Contains(err.Error(), "303") {
		t.Errorf("heal returned %v, want an error naming the 303", err)
	}
	if got := elsewhere.requests(); len(got) != 0 {
		t.Errorf("the redirect was followed: %q", got)
	}
}

func TestParseHealRequest(t *testing.T) {
	t.Parallel()
	r, err := server.ParseHealRequest(`  PUT http://127.0.0.1:8000/v1/vpn/status {"status": "running"} `)
	if err != nil || r.Method != "PUT" || r.URL != "http://127.0.0.1:8000/v1/vpn/status" || r.Body != `{"status": "running"}` {
		t.Errorf("got %+v, %v", r, err)
	}
	if r.String() != `PUT http://127.0.0.1:8000/v1/vpn/status (a body of 21 bytes)` {
		t.Errorf("String() = %q", r.String())
	}
	// What a log or an error shows of a request keeps its secrets out.
	r = mustParse(t, `PUT http://admin:hunter2@127.0.0.1:8000/v1/vpn/status?api_key=k3y {"status":"stopped"}`)
	if got := r.String(); strings.Contains(got, "hunter2") || strings.Contains(got, "k3y") || strings.Contains(got, "stopped") {
		t.Errorf("String() = %q shows a secret", got)
	}
	for _, bad := range []string{"", "post http://x/", "POST", "POST /restart", "POST ftp://x/", "P0ST http://x/"} {
		if _, err := server.ParseHealRequest(bad); err == nil {
			t.Errorf("ParseHealRequest(%q) passed", bad)
		}
	}
}
