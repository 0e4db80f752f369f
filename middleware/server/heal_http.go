package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// A HealRequest is one HTTP request of a heal: a call to a VPN client's
// own control API, such as the one that restarts its tunnel.
type HealRequest struct {
	Method string // GET, POST, PUT...
	URL    string
	Body   string // sent as application/json when it starts with { or [
	// Header is sent too: an API key, say (gluetun's X-API-Key).
	Header http.Header
}

// ParseHealRequest reads "METHOD URL [BODY]", for example
//
//	PUT http://127.0.0.1:8000/v1/vpn/status {"status":"stopped"}
//
// The method is upper case letters, the URL absolute http or https; the
// body is the rest of the text, spaces included.
func ParseHealRequest(s string) (HealRequest, error) {
	method, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	rawURL, body, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if method == "" || strings.ContainsFunc(method, func(r rune) bool { return r < 'A' || r > 'Z' }) {
		return HealRequest{}, fmt.Errorf("method %q: want METHOD URL [BODY], the method in capitals (POST, PUT)", method)
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL is not quoted: it may hold a password.
		return HealRequest{}, fmt.Errorf("%s request: want METHOD URL [BODY] with an absolute http or https URL", method)
	}
	return HealRequest{Method: method, URL: rawURL, Body: strings.TrimSpace(body)}, nil
}

// String names the request without what may be secret: the method, the
// URL without its user's password and without its query (gluetun takes an
// api_key there), and the body's length.
func (r HealRequest) String() string {
	s := r.Method + " "
	if u, err := url.Parse(r.URL); err == nil {
		if u.RawQuery != "" {
			u.RawQuery = "..."
		}
		s += u.Redacted()
	}
	if r.Body != "" {
		s += fmt.Sprintf(" (a body of %d bytes)", len(r.Body))
	}
	return s
}

// HealHTTP returns a HealFunc that sends requests in order with client
// (nil: a client of its own that never reuses a connection, so that a
// restarted control server is reached anew, and follows no redirect, which
// would turn a PUT into a GET and carry the headers elsewhere). Each must
// answer 2xx: the first that does not, or fails, ends the heal with its
// error, naming it (see [HealRequest.String]) and quoting the start of its
// answer. The heal's ctx (the monitor's HealTimeout) bounds them all. Each
// answer's status is logged to logger (nil: not logged).
//
// A heal that stops the VPN and then fails to run it again leaves it
// stopped until the next heal: while the state stays unhealthy the loop
// heals again, spaced by its HealBackoff.
func HealHTTP(requests []HealRequest, client *http.Client, logger *slog.Logger) middleware.HealFunc {
	if client == nil {
		client = &http.Client{
			Transport:     &http.Transport{DisableKeepAlives: true, Proxy: nil},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context) error {
		if len(requests) == 0 {
			return errors.New("heal: no request to send")
		}
		for _, r := range requests {
			status, err := send(ctx, client, r)
			if err != nil {
				// The monitor's observer logs the heal's failure.
				return fmt.Errorf("heal request %s: %w", r, err)
			}
			logger.Info("heal request answered", "request", r.String(), "status", status)
		}
		return nil
	}
}

// healAnswerEnd is how much of a heal request's answer is kept, to log
// and to quote in an error.
const healAnswerEnd = 512

func send(ctx context.Context, client *http.Client, r HealRequest) (int, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, strings.NewReader(r.Body))
	if err != nil {
		return 0, err
	}
	if b := r.Body; strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[") {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		// Do's error quotes the URL: keep only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, err
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, healAnswerEnd))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("answered %s: %s", resp.Status, bytes.TrimSpace(head))
	}
	return resp.StatusCode, nil
}
