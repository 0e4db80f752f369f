package harness

import (
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
// requests) runs unchanged against the lab. A bad body is a 400.
func ClientControlHandler(c *Client) http.Handler {
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
		switch {
		case want.Status == c.status():
			// Already so: nothing to do, as the upstream answers.
		case want.Status == "stopped":
			err = c.Down()
		case want.Status == "running":
			err = c.Up(r.Context())
		default:
			writeJSON(w, http.StatusBadRequest, errorBody{Error: "status: want running or stopped", Field: "status"})
			return
		}
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: "the client peer did not change: " + err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"outcome": want.Status})
	})
	return mux
}

type vpnStatus struct {
	Status string `json:"status"`
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
