package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/tunnelprobe/tunnelprobe/internal/output"
)

// StringList is a repeatable string flag. Its defaults are replaced, not
// extended, by the first value given.
type StringList struct {
	Values []string
	set    bool
}

func (l *StringList) repeatable() {}

func (l *StringList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.Values, ",")
}

// Set appends s, after dropping the defaults if it is the first value.
func (l *StringList) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty value")
	}
	if !l.set {
		l.Values, l.set = nil, true
	}
	l.Values = append(l.Values, s)
	return nil
}

// Func returns a flag value that sets *p to what parse makes of the text,
// and shows it with format: for a type whose parser lives with it (a link
// delay, a certificate file) and has no methods of encoding.TextUnmarshaler.
func Func[T any](p *T, parse func(string) (T, error), format func(T) string) flag.Value {
	return &funcValue[T]{p: p, parse: parse, format: format}
}

type funcValue[T any] struct {
	p      *T
	parse  func(string) (T, error)
	format func(T) string
}

func (v *funcValue[T]) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return v.format(*v.p)
}

func (v *funcValue[T]) Set(s string) error {
	x, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p = x
	return nil
}

// String is Func for a string checked by parse, shown as it is.
func String(p *string, parse func(string) (string, error)) flag.Value {
	return Func(p, parse, func(s string) string { return s })
}

// Duration sets *p to def and returns a flag value for it that rejects
// negative durations, and zero unless allowZero.
func Duration(p *time.Duration, def time.Duration, allowZero bool) flag.Value {
	*p = def
	return Func(p, func(s string) (time.Duration, error) { return parseDuration(s, allowZero) }, time.Duration.String)
}

func parseDuration(s string, allowZero bool) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, errors.New("not a duration such as 500ms, 5s or 1m")
	case d < 0:
		return 0, errors.New("must not be negative")
	case d == 0 && !allowZero:
		return 0, errors.New("must be positive")
	}
	return d, nil
}

// MinDuration sets *p to def and returns a flag value for it that rejects
// durations shorter than least.
func MinDuration(p *time.Duration, def, least time.Duration) flag.Value {
	*p = def
	return Func(p, func(s string) (time.Duration, error) {
		d, err := parseDuration(s, false)
		if err == nil && d < least {
			err = fmt.Errorf("shorter than %v", least)
		}
		return d, err
	}, time.Duration.String)
}

// Int sets *p to def and returns a flag value for it that rejects integers
// below least.
func Int(p *int, def, least int) flag.Value {
	*p = def
	return Func(p, func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			return 0, errors.New("not an integer")
		case n < least:
			return 0, fmt.Errorf("must be at least %d", least)
		}
		return n, nil
	}, strconv.Itoa)
}

// Float returns a flag value for *p that takes non-negative numbers.
func Float(p *float64) flag.Value { return Func(p, parseFloat, formatFloat) }

func parseFloat(s string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil || math.IsNaN(x) || math.IsInf(x, 0):
		return 0, errors.New("not a number")
	case x < 0:
		return 0, errors.New("must not be negative")
	}
	return x, nil
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Share returns a flag value for *p that takes a share in [0, 1): 0.2 is
// 20%.
func Share(p *float64) flag.Value {
	return Func(p, func(s string) (float64, error) {
		x, err := parseFloat(s)
		if err == nil && x >= 1 {
			err = errors.New("want a share below 1 (0.2: 20%)")
		}
		return x, err
	}, formatFloat)
}

// InterfaceName accepts what Linux accepts as a network interface's name
// (and wireguard-go as a device's): 1 to 15 bytes, not "." or "..", no
// slash, colon or space. Anything else would be bound to and read in vain.
func InterfaceName(s string) (string, error) {
	switch {
	case s == "" || s == "." || s == "..":
		return "", errors.New("not an interface name")
	case len(s) > 15:
		return "", fmt.Errorf("%d bytes: an interface name has at most 15", len(s))
	case strings.ContainsAny(s, "/: \t\n\r"):
		return "", errors.New("an interface name has no slash, colon or space")
	}
	return s, nil
}

// IntList returns a flag value for *p that takes a comma list of integers
// of at least least each; a later value replaces an earlier one.
func IntList(p *[]int, least int) flag.Value {
	return Func(p, func(s string) ([]int, error) {
		var values []int
		for part := range strings.SplitSeq(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			switch {
			case err != nil:
				return nil, fmt.Errorf("%q is not a whole number", part)
			case n < least:
				return nil, fmt.Errorf("%d: each must be at least %d", n, least)
			}
			values = append(values, n)
		}
		return values, nil
	}, func(values []int) string {
		s := make([]string, len(values))
		for i, n := range values {
			s[i] = strconv.Itoa(n)
		}
		return strings.Join(s, ",")
	})
}

// Choice sets *p to def and returns a flag value for it that takes one of
// choices only.
func Choice(p *string, def string, choices ...string) flag.Value {
	*p = def
	return String(p, func(s string) (string, error) {
		for _, c := range choices {
			if s == c {
				return s, nil
			}
		}
		return "", fmt.Errorf("want one of %s", strings.Join(choices, ", "))
	})
}

// Addr sets *p to def and returns a flag value for it that takes a
// host:port address, so that a malformed address is a usage error naming
// the flag rather than a failure to listen. With allowEmpty, "" means none.
func Addr(p *string, def string, allowEmpty bool) flag.Value {
	*p = def
	return String(p, func(s string) (string, error) {
		if s == "" && allowEmpty {
			return s, nil
		}
		_, port, err := net.SplitHostPort(s)
		if err != nil {
			if i := strings.LastIndex(s, ":"); i > 0 && !strings.HasPrefix(s, "[") {
				_, portErr := strconv.ParseUint(s[i+1:], 10, 16)
				if ip, err := netip.ParseAddr(s[:i]); err == nil && ip.Is6() && portErr == nil {
					// An IPv6 address and a port, as $(POD_IP):9999 gives.
					return "", fmt.Errorf("an IPv6 address takes brackets before its port: [%s]:%s (and so does an IPv4 one, [10.0.0.1]:9999, for a value that must fit both)", s[:i], s[i+1:])
				}
			}
			if ip, err := netip.ParseAddr(s); err == nil && ip.Is6() {
				return "", fmt.Errorf("an IPv6 address without a port: want [%s]:9999", s)
			}
			return "", errors.New("not a host:port address such as 127.0.0.1:9999, [::1]:9999 or :9999")
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return "", fmt.Errorf("port %q is not a number from 0 to 65535", port)
		}
		return s, nil
	})
}

// AddrVar defines an Addr flag on fs and returns where it is stored.
func AddrVar(fs *flag.FlagSet, name, def string, allowEmpty bool, usage string) *string {
	p := new(string)
	fs.Var(Addr(p, def, allowEmpty), name, usage)
	return p
}

// OutputFile returns a flag value for *p that takes the path of a file to
// write, as output.File or output.Append writes it (output.CheckFile): not
// a directory, in a directory that exists and takes a file (that of a
// symbolic link's target, also a dangling link's), or an existing file
// that opens for writing. What is wrong is found when the flag is set
// rather than after a run of many minutes. "" means none.
func OutputFile(p *string) flag.Value {
	return String(p, func(s string) (string, error) {
		if s == "" {
			return s, nil
		}
		return s, output.CheckFile(s)
	})
}
