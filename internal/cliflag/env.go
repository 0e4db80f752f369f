package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// EnvPrefix starts the name of the environment variable behind every flag.
const EnvPrefix = "TUNNELPROBE_"

// bareEnvCommand is the command whose variables carry no command name: the
// health server, which a container is configured by.
const bareEnvCommand = "serve"

// EnvName returns the environment variable that sets flag name of the
// command whose flag set is fs, named "PROGRAM COMMAND...": for serve (and
// a flag set named by the program alone) TUNNELPROBE_<FLAG>, such as
// TUNNELPROBE_FAILURE_THRESHOLD; for any other command
// TUNNELPROBE_<COMMAND>_<FLAG>, such as TUNNELPROBE_LOAD_RATE and
// TUNNELPROBE_LAB_LINK_RATE. So one name means one thing: load's --rate
// (pacing) and the lab's (a link's rate), serve's --metrics (a switch) and
// load's (an address), serve's --timeout and probe's, which share a
// container, each have their own variable.
func EnvName(fs *flag.FlagSet, name string) string {
	return envPrefix(fs) + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// envPrefix is "TUNNELPROBE_" and the command's words, as EnvName says.
func envPrefix(fs *flag.FlagSet) string {
	words := strings.Fields(fs.Name())
	if len(words) < 2 || len(words) == 2 && words[1] == bareEnvCommand {
		return EnvPrefix
	}
	return EnvPrefix + strings.ToUpper(strings.Join(words[1:], "_")) + "_"
}

// A repeatable flag takes each of its values from one flag on the command
// line; the environment gives them all in one variable, separated by commas.
type repeatable interface {
	flag.Value
	repeatable()
}

// Parse parses args into fs, then sets every flag that args left alone from
// its environment variable (see EnvName), read with getenv. So a flag on the
// command line wins over the environment, and the environment over the
// default. An empty variable counts as unset. A bad value in the
// environment yields an error naming both the flag and the variable. Flags
// set either way are those fs.Visit visits.
//
// Each of exclusive names flags that set the same thing in different ways
// (--timeout and --timeouts): once one of them is on the command line, the
// variables of all of them are ignored.
func Parse(fs *flag.FlagSet, args []string, getenv func(string) string, exclusive ...[]string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return doubleDash(err)
	}
	onCommandLine := Given(fs)
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
		env := EnvName(fs, f.Name)
		v := getenv(env)
		if v == "" {
			return
		}
		var err error
		if _, ok := f.Value.(repeatable); ok {
			for item := range strings.SplitSeq(v, ",") {
				if err = fs.Set(f.Name, strings.TrimSpace(item)); err != nil {
					break
				}
			}
		} else {
			err = fs.Set(f.Name, v)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid value %q for flag --%s from environment variable %s: %w", v, f.Name, env, err))
		}
	})
	return errors.Join(errs...)
}

// Given returns the names of the flags of fs that were set, on the command
// line or (after Parse) from the environment.
func Given(fs *flag.FlagSet) map[string]bool {
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// ParseInterspersed is Parse for a command that takes positional arguments
// among its flags, in any order ("--" ends the flags). It returns the
// positional arguments.
func ParseInterspersed(fs *flag.FlagSet, args []string, getenv func(string) string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, doubleDash(err)
		}
		if fs.NArg() == 0 {
			break
		}
		rest := fs.Args()
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...) // all after "--"
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return positional, Parse(fs, nil, getenv)
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
