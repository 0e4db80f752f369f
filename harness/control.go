package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/textnum"
)

// LinkState is the JSON form of the link served by GET /link.
type LinkState struct {
	Rate    string  `json:"rate"`
	RateBPS int64   `json:"rate_bps"`
	Delay   string  `json:"delay"`
	Queue   string  `json:"queue"`
	Loss    float64 `json:"loss"`
	// MTU is the largest IP packet the link carries (Settings.MTU); 0:
	// no limit.
	MTU  int  `json:"mtu"`
	Down bool `json:"down"`
	// UplinkDown and DownlinkDown are one-way outages.
	UplinkDown   bool     `json:"uplink_down"`
	DownlinkDown bool     `json:"downlink_down"`
	Uplink       Counters `json:"uplink"`
	Downlink     Counters `json:"downlink"`
}

// State returns the link's settings and counters in their JSON form.
func (st LinkStats) State() LinkState {
	s := st.Settings
	return LinkState{
		Rate: s.Rate.String(), RateBPS: int64(s.Rate), Delay: s.Delay.String(), Queue: s.Queue.String(),
		Loss: s.Loss, MTU: s.MTU, Down: s.Down, UplinkDown: s.UplinkDown, DownlinkDown: s.DownlinkDown,
		Uplink: st.Uplink, Downlink: st.Downlink,
	}
}

// FieldError is a bad value in a link update; Field is its JSON name.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// ParseLinkUpdate reads a JSON object with any of rate, delay, queue, loss,
// mtu, down, uplink_down and downlink_down, and returns a function that
// applies it to Settings. Rate and
// queue take the strings of rate.Parse and ParseQueue or a number (bits/s,
// bytes); delay a Go duration string; loss a number in 0..1 or a string
// such as "1%"; mtu a number of bytes (0 for no limit) or a string for
// ParseMTU; the downs a boolean each. Errors are *FieldError.
func ParseLinkUpdate(body []byte) (func(*Settings), error) {
	var raw map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&raw); err != nil {
		return nil, &FieldError{Field: "body", Err: fmt.Errorf("not a JSON object: %w", err)}
	}
	if raw == nil {
		return nil, &FieldError{Field: "body", Err: errors.New("not a JSON object")}
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, &FieldError{Field: "body", Err: errors.New("more than one JSON value: want one object")}
	}
	var edits []func(*Settings)
	for _, field := range []string{"rate", "delay", "queue", "loss", "mtu", "down", "uplink_down", "downlink_down"} {
		v, ok := raw[field]
		if !ok {
			continue
		}
		delete(raw, field)
		edit, err := parseField(field, v)
		if err != nil {
			return nil, &FieldError{Field: field, Err: err}
		}
		edits = append(edits, edit)
	}
	for field := range raw {
		if field == "" {
			field = `""` // still a name the client can see
		}
		return nil, &FieldError{Field: field, Err: errors.New("unknown field")}
	}
	return func(s *Settings) {
		for _, e := range edits {
			e(s)
		}
	}, nil
}

func parseField(field string, v json.RawMessage) (func(*Settings), error) {
	switch field {
	case "rate":
		var r Rate
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, err
		}
		return func(st *Settings) { st.Rate = r }, nil
	case "delay":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, errors.New("want a duration string such as \"20ms\"")
		}
		d, err := ParseDelay(s)
		if err != nil {
			return nil, err
		}
		return func(st *Settings) { st.Delay = d }, nil
	case "queue":
		var q QueueLimit
		if err := json.Unmarshal(v, &q); err != nil {
			return nil, err
		}
		return func(st *Settings) { st.Queue = q }, nil
	case "loss":
		p, err := textField(v, ParseLoss)
		if err != nil {
			return nil, err
		}
		return func(st *Settings) { st.Loss = p }, nil
	case "mtu":
		mtu, err := textField(v, ParseMTU)
		if err != nil {
			return nil, err
		}
		return func(st *Settings) { st.MTU = mtu }, nil
	case "down", "uplink_down", "downlink_down":
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, errors.New("want true or false")
		}
		return func(st *Settings) {
			switch field {
			case "down":
				st.Down = b
			case "uplink_down":
				st.UplinkDown = b
			default:
				st.DownlinkDown = b
			}
		}, nil
	}
	return nil, errors.New("unknown field")
}

// textField reads v, a JSON string or number, with parse.
func textField[T any](v json.RawMessage, parse func(string) (T, error)) (T, error) {
	text, err := textnum.JSONText(v)
	if err != nil {
		var zero T
		return zero, err
	}
	return parse(text)
}

// ControlHandler serves the lab's control API:
//
//	GET  /link     settings and counters (LinkState)
//	PUT  /link     change any of rate, delay, queue, loss, mtu, down,
//	               uplink_down, downlink_down (see
//	               ParseLinkUpdate); answers the new LinkState
//	POST /restart  restart the client peer (404 if restart is nil)
//
// The client process of a split lab serves ClientControlHandler instead.
// A bad value is a 400 whose JSON body names the field; other methods get
// 405. Only parser messages reach the client, never internal errors.
func ControlHandler(link *Link, restart func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /link", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, link.Stats().State())
	})
	mux.HandleFunc("PUT /link", func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(r)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody{Error: "body: " + err.Error(), Field: "body"})
			return
		}
		edit, err := ParseLinkUpdate(body)
		if err == nil {
			err = link.Update(edit)
		}
		if err != nil {
			var fe *FieldError
			field := "body"
			if errors.As(err, &fe) {
				field = fe.Field
			}
			writeJSON(w, http.StatusBadRequest, errorBody{Error: err.Error(), Field: field})
			return
		}
		writeJSON(w, http.StatusOK, link.Stats().State())
	})
	mux.HandleFunc("POST /restart", restartHandler(restart))
	return mux
}

func restartHandler(restart func(context.Context) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if restart == nil {
			http.NotFound(w, r)
			return
		}
		start := time.Now()
		if err := restart(r.Context()); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: "restart failed"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"restarted": "client", "took": time.Since(start).String()})
	}
}

type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func readBody(r *http.Request) ([]byte, error) {
	const limit = 64 << 10
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, limit)); err != nil {
		return nil, errors.New("unreadable or larger than " + strconv.Itoa(limit) + " bytes")
	}
	return buf.Bytes(), nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
