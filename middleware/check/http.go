package check

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/url"
)

// maxHTTPBody is how much of a response body HTTP reads: enough for a
// captive portal's page to arrive, not enough to load the tunnel.
const maxHTTPBody = 10 << 10

// HTTP passes when a GET of URL answers with a status from 200 to 399.
// It proves what TCP and TLS checks cannot: that an application behind the
// tunnel answers, which suits a VPN whose exit is only known to work when a
// given service responds.
//
// Every check uses a fresh transport with keep-alives off, no proxy and no
// connection pool, so each one dials through the tunnel as it is now rather
// than reusing a connection opened before the tunnel broke, and nothing is
// left open once Check returns. Redirects are not followed: a 3xx already
// proves that the server answered, and following one could leave the tunnel
// or reach a host the check was not meant to depend on.
// An HTTP check holds no state and is safe for concurrent use.
type HTTP struct {
	// URL is the http or https URL to GET.
	URL string
	// Dialer opens the connection; nil means a plain net.Dialer.
	Dialer Dialer
	// RootCAs verifies an https server; nil means the system roots.
	RootCAs *x509.CertPool
	// InsecureSkipVerify accepts any certificate. For labs only.
	InsecureSkipVerify bool
}

var _ Checker = HTTP{}

// String names the check as its errors do, with a password in the URL
// left out: "http https://1.1.1.1/".
func (c HTTP) String() string {
	u, err := url.Parse(c.URL)
	if err != nil {
		return "http"
	}
	return "http " + u.Redacted()
}

// Check sends one GET with ctx, reads at most 10 KiB of the body and closes
// everything it opened.
func (c HTTP) Check(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		return newStepError(ctx, "http", c.URL, "request", err)
	}
	target := req.URL.Redacted() // keep a password in the URL out of logs

	tr := &http.Transport{
		Proxy:             nil, // a proxy would bypass the tunnel under test
		DialContext:       dialerOrDefault(c.Dialer).DialContext,
		DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{
			RootCAs:            c.RootCAs,
			InsecureSkipVerify: c.InsecureSkipVerify,
			MinVersion:         tls.VersionTLS12,
		},
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}

	resp, err := client.Do(req)
	if err != nil {
		return newStepError(ctx, "http", target, "get", err)
	}
	// The status line already decided the check; the body is drained only
	// so the server sees an orderly read, and a failure reading it does not
	// change the verdict.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxHTTPBody))
	resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 399 {
		return newStepError(ctx, "http", target, "status", errors.New(resp.Status))
	}
	return nil
}
