package scenarios

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// What the Kubelet and Docker probers' constructors share.

// fillDefault gives a prober setting its default when it is zero; a
// negative setting is an error naming the field, added to errs.
func fillDefault[T time.Duration | int](errs *[]error, name string, v *T, def T) {
	switch {
	case *v < 0:
		*errs = append(*errs, fmt.Errorf("%s must not be negative, got %v", name, *v))
	case *v == 0:
		*v = def
	}
}

// finishProbeConfig adds the check of the probe's URL to errs and returns
// them all as one error; without errors it gives clock its default.
func finishProbeConfig(errs []error, probeURL string, clock *clockwork.Clock) error {
	if err := checkProbeURL(probeURL); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("scenarios: %w", err)
	}
	if *clock == nil {
		*clock = clockwork.NewRealClock()
	}
	return nil
}

// checkProbeURL returns an error naming the field unless s is an http or
// https URL with a host.
func checkProbeURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url must be an http or https URL, got %q", s)
	}
	return nil
}

// httpProbe is a prober's probe: one HTTPGet of probeURL.
func httpProbe(probeURL string, timeout time.Duration, dialer middleware.Dialer) func(context.Context) ProbeResult {
	return func(ctx context.Context) ProbeResult {
		return HTTPGet(ctx, probeURL, timeout, dialer)
	}
}
