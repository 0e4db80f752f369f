package prober

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware/check"
)

// KubeProbeUserAgent is the User-Agent of the probe requests of
// [DefaultKubeletVersion], kube-probe/1.37; see [KubeletVersion.UserAgent].
const KubeProbeUserAgent = "kube-probe/1.37"

const (
	// maxProbeBody is how much of a response body a probe reads, as the
	// kubelet's maxRespBodyLength: the rest is dropped, without error.
	maxProbeBody = 10 << 10
	// maxRedirects is how many same-host redirects a probe follows.
	maxRedirects = 10
)

// An Outcome is the result of one probe.
type Outcome int

const (
	// Success: a status from 200 to 299.
	Success Outcome = iota
	// Warning: a status from 300 to 399, that is a redirect the probe did
	// not follow (to another host). It counts as a success; the kubelet
	// also records a ProbeWarning event.
	Warning
	// Failure: a status of 400 or more, or no response: a refused
	// connection, a timeout before the headers, too many redirects.
	Failure
	// Unknown: the probe could not complete after the response began, such
	// as a timeout while reading the body. The kubelet counts this as a
	// prober error: it tries again at once, up to three attempts, and if
	// all of them err it throws the result away.
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Warning:
		return "warning"
	case Failure:
		return "failure"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Passed reports whether o counts as a success: Warning (a 3xx) passes too.
func (o Outcome) Passed() bool { return o == Success || o == Warning }

// A Result records one probe.
type Result struct {
	// Start is when the probe began, Duration how long it took, both on the
	// prober's clock.
	Start    time.Time
	Duration time.Duration
	Outcome  Outcome
	// Code is the HTTP status of the last response, 0 when none arrived.
	Code int
	// Err says why the probe failed or erred; nil for Success. For a
	// Warning it notes the redirect that was not followed.
	Err error
	// Body holds the first bytes of the response body, for logs.
	Body string
}

// String returns r as one line of a log: its start (to the millisecond),
// outcome, status ("---" without a response), duration and error.
func (r Result) String() string {
	code := "---"
	if r.Code != 0 {
		code = strconv.Itoa(r.Code)
	}
	line := fmt.Sprintf("%s probe %-7s %s %v", r.Start.Format("15:04:05.000"), r.Outcome, code, r.Duration.Round(10*time.Microsecond))
	if r.Err != nil {
		line += ": " + r.Err.Error()
	}
	return line
}

// maxLoggedBody caps Result.Body.
const maxLoggedBody = 256

// HTTPGet performs one httpGet probe of url as the kubelet of
// [DefaultKubeletVersion] does; see [KubeletVersion.HTTPGet].
func HTTPGet(ctx context.Context, url string, timeout time.Duration, dialer check.Dialer) Result {
	return DefaultKubeletVersion.HTTPGet(ctx, url, timeout, dialer)
}

// HTTPGet performs one httpGet probe of url as the kubelet of version v
// does and returns its result. Like the kubelet it opens a new connection
// (keep-alives off), ignores proxies, turns compression off, does not
// verify TLS certificates and negotiates HTTP/2 over TLS (ALPN h2, else
// HTTP/1.1); it sends User-Agent [KubeletVersion.UserAgent] and Accept */*.
// timeout is the http.Client timeout: it covers the dial, the TLS
// handshake, the headers and the body, and closes the connection when it
// fires. Redirects are followed only to the same host name, at most 10; a
// redirect to another host is returned as is, a Warning. Only the first
// 10 KiB of the body are read, and truncation is not an error. Ending ctx
// also ends the probe. dialer opens the connection; nil means the host
// network, lingering 1 s on close from 1.27 on.
func (v KubeletVersion) HTTPGet(ctx context.Context, url string, timeout time.Duration, dialer check.Dialer) Result {
	return timed(func() Result { return httpGet(ctx, v, url, timeout, dialer) })
}

// timed runs probe and stamps its result with when it started and how long
// it took.
func timed(probe func() Result) Result {
	start := time.Now()
	res := probe()
	res.Start, res.Duration = start, time.Since(start)
	return res
}

func httpGet(ctx context.Context, v KubeletVersion, url string, timeout time.Duration, dialer check.Dialer) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Result{Outcome: Failure, Err: err}
	}
	req.Header.Set("User-Agent", v.UserAgent())
	req.Header.Set("Accept", "*/*")

	if dialer == nil {
		dialer = v.dialer()
	}
	tr := probeTransport(dialer)
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Hostname() != via[0].URL.Hostname() {
				return http.ErrUseLastResponse
			}
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return nil
		},
	}

	resp, err := client.Do(req)
	if err != nil {
		return Result{Outcome: Failure, Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	res := Result{Code: resp.StatusCode, Body: string(body[:min(len(body), maxLoggedBody)])}
	if err != nil {
		// The status is known, but the kubelet treats a failed body read
		// as a prober error rather than a failure.
		res.Outcome, res.Err = Unknown, fmt.Errorf("read body: %w", err)
		return res
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		res.Outcome = Success
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		res.Outcome = Warning
		res.Err = fmt.Errorf("probe terminated redirects: %s", resp.Status)
		if loc := resp.Header.Get("Location"); loc != "" {
			res.Err = fmt.Errorf("probe terminated redirects: %s to %s", resp.Status, loc)
		}
	default:
		res.Outcome = Failure
		res.Err = fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
	}
	return res
}

// probeTransport returns the transport of one probe, as the kubelet's
// (pkg/probe/http/http.go, utilnet.SetTransportDefaults): keep-alives,
// proxies and compression off, TLS not verified, and HTTP/2 offered over
// TLS beside HTTP/1.1, so that an HTTPS server that speaks HTTP/2 alone
// passes as it does the kubelet's probe. The HTTP/2 connection health
// check's timeouts are the kubelet's too (its ReadIdleTimeout 30 s and
// PingTimeout 15 s), although a probe's connection rarely lives long enough
// to see one. With keep-alives off, an HTTP/2 connection too is closed once
// its one request is done.
func probeTransport(dialer check.Dialer) *http.Transport {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	return &http.Transport{
		Proxy:              nil,
		DialContext:        dialer.DialContext,
		DisableKeepAlives:  true,
		DisableCompression: true,
		TLSClientConfig:    &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet
		// The kubelet's transport also bounds the TLS handshake by itself;
		// the client timeout is the shorter of the two for any probe
		// timeout below 10 s.
		TLSHandshakeTimeout: 10 * time.Second,
		// A custom dialer and TLS configuration turn net/http's HTTP/2 off
		// unless it is asked for.
		Protocols: &protocols,
		HTTP2:     &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second},
	}
}
