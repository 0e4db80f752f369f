package harness

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net/http"
)

// ClientControlHandler serves the client peer's control API, as a VPN
// client's own control server does:
//
//	POST /restart         restart the client peer (see Client.Restart)
//	GET  /v1/vpn/status   {"status":"running"} or {"status":"stopped"}
//	PUT  /v1/vpn/status   {"status":"stopped"} takes it down (Client.Down),
//	                      {"status":"running"} brings it up (Client.Up)
//
// The /v1/vpn/status routes take what the upstream VPN client's (gluetun's)
// control server takes, so that a heal written for it (serve's --heal-http
// requests) runs unchanged against the lab. A bad body is a 400. With an
// apiKey, every request must carry it in X-API-Key, as gluetun's apikey
// role asks: others get a 401.
func ClientControlHandler(c *Client, apiKey string) http.Handler { return vpnControlHandler(c, apiKey) }

// OpenVPNControlHandler serves an OpenVPN client's control API: the routes
// of ClientControlHandler, a restart and the status switch stopping and
// starting its openvpn process (OpenVPNClient.Restart, Down, Up).
func OpenVPNControlHandler(c *OpenVPNClient, apiKey string) http.Handler {
	return vpnControlHandler(c, apiKey)
}

// vpnSwitch is a VPN client the control API restarts, stops and starts.
type vpnSwitch interface {
	Restart(context.Context) error
	status() string                          // "running" or "stopped"
	setStatus(context.Context, string) error // see Client.setStatus
}

var (
	_ vpnSwitch = (*Client)(nil)
	_ vpnSwitch = (*OpenVPNClient)(nil)
)

// vpnControlHandler serves the control API of ClientControlHandler for c.
func vpnControlHandler(c vpnSwitch, apiKey string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /restart", restartHandler(c.Restart))
	mux.HandleFunc("GET /v1/vpn/status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, vpnStatus{Status: c.status()})
	})
	mux.HandleFunc("PUT /v1/vpn/status", func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		var want vpnStatus
		if err == nil {
			err = json.Unmarshal(body, &want)
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody{Error: "body: want {\"status\":\"running\"} or {\"status\":\"stopped\"}", Field: "status"})
			return
		}
		if want.Status != "running" && want.Status != "stopped" {
			writeJSON(w, http.StatusBadRequest, errorBody{Error: "status: want running or stopped", Field: "status"})
			return
		}
		err = c.setStatus(r.Context(), want.Status)
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: "the VPN client did not change: " + err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"outcome": want.Status})
	})
	if apiKey == "" {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-API-Key")), []byte(apiKey)) != 1 {
			writeJSON(w, http.StatusUnauthorized, errorBody{Error: "X-API-Key: missing or wrong"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

type vpnStatus struct {
	Status string `json:"status"`
}

// setStatus takes the client peer down ("stopped") or brings it up
// ("running"), or does nothing when it is so already, in one hold of the
// lock: two callers asking the same never see each other's change as an
// error. Bringing it up completes even when the caller leaves (ctx ends), as
// Restart does, so that a heal that gives up cannot leave the tunnel down.
func (c *Client) setStatus(ctx context.Context, status string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case status == "stopped" && c.peer != nil:
		c.downLocked()
	case status == "running" && c.peer == nil:
		return c.upLocked(context.WithoutCancel(ctx))
	}
	return nil
}

// status is "running" while the client peer is up, "stopped" otherwise.
func (c *Client) status() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.peer == nil {
		return "stopped"
	}
	return "running"
}
