package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tunnelprobe/tunnelprobe/middleware"
)

// envPrefix starts the name of the environment variable behind every flag.
const envPrefix = "TUNNELPROBE_"

// envName returns the environment variable that sets flag name:
// TUNNELPROBE_FAILURE_THRESHOLD for "failure-threshold".
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// A listValue is a repeatable flag. The environment gives all its values in
// one variable, separated by commas, and setList takes them apart.
type listValue interface {
	flag.Value
	setList(s string) error
}

// parseWithEnv parses args into fs, then sets every flag that args left
// alone from its environment variable (see envName), read with getenv. So a
// flag on the command line wins over the environment, and the environment
// over the default. An empty variable counts as unset. A bad value in the
// environment yields an error naming both the flag and the variable.
//
// Each of exclusive names flags that set the same thing in different ways
// (--timeout and --timeouts): once one of them is on the command line, the
// variables of all of them are ignored.
func parseWithEnv(fs *flag.FlagSet, args []string, getenv func(string) string, exclusive ...[]string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return doubleDash(err)
	}
	onCommandLine := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	for _, group := range exclusive {
		if slices.ContainsFunc(group, func(name string) bool { return onCommandLine[name] }) {
			for _, name := range group {
				onCommandLine[name] = true
			}
		}
	}

	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if onCommandLine[f.Name] {
			return
		}
		env := envName(f.Name)
		v := getenv(env)
		if v == "" {
			return
		}
		var err error
		if l, ok := f.Value.(listValue); ok {
			err = l.setList(v)
		} else {
			err = fs.Set(f.Name, v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid value %q for flag --%s from environment variable %s: %w", v, f.Name, env, err))
		}
	})
	return errors.Join(errs...)
}

// doubleDash rewrites a flag package error to name its flag with two dashes,
// as every other message of ours and the usage do.
func doubleDash(err error) error {
	msg := err.Error()
	for _, prefix := range []string{"flag provided but not defined: -", "flag needs an argument: -"} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			return errors.New(prefix + "-" + rest)
		}
	}
	// invalid value "V" for flag -NAME: ERR, where V is quoted by %q.
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if v, err := strconv.QuotedPrefix(rest); err == nil {
			if tail, ok := strings.CutPrefix(rest[len(v):], " for flag -"); ok {
				return fmt.Errorf("invalid value %s for flag --%s", v, tail)
			}
		}
	}
	return err
}

// printFlags writes the flags of fs to w, each with its environment
// variable, in the layout of flag.PrintDefaults.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		fmt.Fprintf(w, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "\n    \t[$%s]\n", envName(f.Name))
	})
}

// parseCommand parses the flags of a subcommand named by fs.Name, with the
// environment read through getenv and exclusive as for parseWithEnv, and
// allows no positional argument.
// ok is false when the command must exit with code at once: 0 after --help
// (usage and flags on stdout), 2 after a usage error (on stderr). fs must
// have been created with flag.ContinueOnError; its output is silenced here
// so that every message comes from this function.
func parseCommand(fs *flag.FlagSet, args []string, getenv func(string) string, usage string, stdout, stderr io.Writer, exclusive ...[]string) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := parseWithEnv(fs, args, getenv, exclusive...)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "%s\nFlags (each also read from the environment variable shown):\n", usage)
		printFlags(stdout, fs)
		return 0, false
	case err == nil && fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q: %s takes flags only", fs.Arg(0), fs.Name())
	}
	if err != nil {
		return usageError(stderr, fs.Name(), err), false
	}
	return 0, true
}

// usageError reports err for command on w and returns exit code 2.
func usageError(w io.Writer, command string, err error) int {
	fmt.Fprintf(w, "%s: %v\nRun '%s --help' for usage.\n", command, err, command)
	return 2
}

// exitCode reports err for command on w and returns 1, or returns 0 for a
// nil err.
func exitCode(w io.Writer, command string, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(w, "%s: %v\n", command, err)
	return 1
}

// stringList is a repeatable string flag. Its defaults are replaced, not
// extended, by the first value given.
type stringList struct {
	values []string
	set    bool
}

var _ listValue = (*stringList)(nil)

func (l *stringList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.values, ",")
}

func (l *stringList) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty value")
	}
	if !l.set {
		l.values, l.set = nil, true
	}
	l.values = append(l.values, s)
	return nil
}

func (l *stringList) setList(s string) error {
	for v := range strings.SplitSeq(s, ",") {
		if err := l.Set(strings.TrimSpace(v)); err != nil {
			return err
		}
	}
	return nil
}

// durationList is --timeouts: a middleware.Ladder ("2s,4s,6s", or
// "reference") and whether it was set. A later value replaces an earlier
// one.
type durationList struct {
	values middleware.Ladder
	set    bool
}

func (l *durationList) String() string {
	if l == nil {
		return ""
	}
	return l.values.String()
}

func (l *durationList) Set(s string) error {
	values, err := middleware.ParseLadder(s)
	if err != nil {
		return err
	}
	l.values, l.set = values, true
	return nil
}

// durationValue is a duration flag that rejects negative values, and zero
// unless allowZero.
type durationValue struct {
	d         *time.Duration
	allowZero bool
	set       bool
}

func newDuration(p *time.Duration, def time.Duration, allowZero bool) *durationValue {
	*p = def
	return &durationValue{d: p, allowZero: allowZero}
}

func (v *durationValue) String() string {
	if v == nil || v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v *durationValue) Set(s string) error {
	d, err := parsePositive(s, v.allowZero)
	if err != nil {
		return err
	}
	*v.d, v.set = d, true
	return nil
}

func parsePositive(s string, allowZero bool) (time.Duration, error) {
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

// intValue is an integer flag with a lower bound.
type intValue struct {
	n     *int
	least int
}

func newInt(p *int, def, least int) *intValue {
	*p = def
	return &intValue{n: p, least: least}
}

func (v *intValue) String() string {
	if v == nil || v.n == nil {
		return ""
	}
	return strconv.Itoa(*v.n)
}

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not an integer")
	}
	if n < v.least {
		return fmt.Errorf("must be at least %d", v.least)
	}
	*v.n = n
	return nil
}

// choiceValue is a string flag restricted to a few words.
type choiceValue struct {
	s       *string
	choices []string
}

func newChoice(p *string, def string, choices ...string) *choiceValue {
	*p = def
	return &choiceValue{s: p, choices: choices}
}

func (v *choiceValue) String() string {
	if v == nil || v.s == nil {
		return ""
	}
	return *v.s
}

func (v *choiceValue) Set(s string) error {
	for _, c := range v.choices {
		if s == c {
			*v.s = s
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(v.choices, ", "))
}

// addrValue is a host:port flag, checked when it is set so that a
// malformed address is a usage error naming the flag rather than a failure
// to listen. With allowEmpty, "" means none.
type addrValue struct {
	s          *string
	allowEmpty bool
}

// newAddr registers nothing: it sets *p to def and returns the flag value.
func newAddr(p *string, def string, allowEmpty bool) *addrValue {
	*p = def
	return &addrValue{s: p, allowEmpty: allowEmpty}
}

// addrFlag is newAddr for a new string.
func addrFlag(fs *flag.FlagSet, name, def string, allowEmpty bool, usage string) *string {
	p := new(string)
	fs.Var(newAddr(p, def, allowEmpty), name, usage)
	return p
}

func (v *addrValue) String() string {
	if v == nil || v.s == nil {
		return ""
	}
	return *v.s
}

func (v *addrValue) Set(s string) error {
	if s == "" && v.allowEmpty {
		*v.s = s
		return nil
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return errors.New("not a host:port address such as 127.0.0.1:9999 or :9999")
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	*v.s = s
	return nil
}
