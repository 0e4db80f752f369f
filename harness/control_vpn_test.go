package harness

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The client's control API takes the upstream VPN client's requests: the
// heal of deploy/compose puts the status to stopped, then to running.
func TestClientControlHandlerTakesTheUpstreamRequests(t *testing.T) {
	l := startLab(t, Config{})
	srv := httptest.NewServer(ClientControlHandler(l.Client(), "k3y"))
	defer srv.Close()
	key := "k3y"
	do := func(method, body string) (int, map[string]string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL+"/v1/vpn/status", strings.NewReader(body))
		req.Header.Set("X-API-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]string
		_ = json.Unmarshal(b, &m)
		return resp.StatusCode, m
	}
	works := func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		return l.TLSCheck().Check(ctx)
	}

	if code, m := do("GET", ""); code != 200 || m["status"] != "running" {
		t.Fatalf("GET: %d %v, want running", code, m)
	}
	if code, m := do("PUT", `{"status":"stopped"}`); code != 200 || m["outcome"] != "stopped" {
		t.Fatalf("PUT stopped: %d %v", code, m)
	}
	if err := works(); !errors.Is(err, ErrClientDown) {
		t.Fatalf("a check through the stopped client: %v, want ErrClientDown", err)
	}
	if code, m := do("GET", ""); code != 200 || m["status"] != "stopped" {
		t.Fatalf("GET: %d %v, want stopped", code, m)
	}
	if code, _ := do("PUT", `{"status":"stopped"}`); code != 200 {
		t.Fatalf("PUT stopped again: %d, want 200 (nothing to do)", code)
	}
	if code, m := do("PUT", `{"status":"running"}`); code != 200 || m["outcome"] != "running" {
		t.Fatalf("PUT running: %d %v", code, m)
	}
	if err := works(); err != nil {
		t.Fatalf("a check after running again: %v", err)
	}
	for _, bad := range []string{`{"status":"paused"}`, `status=stopped`, ``} {
		if code, m := do("PUT", bad); code != 400 || m["field"] != "status" {
			t.Errorf("PUT %q: %d %v, want 400 naming status", bad, code, m)
		}
	}
	if code, _ := do("DELETE", ""); code != 405 {
		t.Errorf("DELETE: %d, want 405", code)
	}
	// As gluetun's apikey role: without the key nothing changes.
	for _, key = range []string{"", "wrong"} {
		if code, _ := do("PUT", `{"status":"stopped"}`); code != 401 {
			t.Errorf("PUT with key %q: %d, want 401", key, code)
		}
	}
	if err := works(); err != nil {
		t.Errorf("a refused PUT stopped the client: %v", err)
	}
}
