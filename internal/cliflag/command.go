package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ParseCommand parses the flags of a subcommand named by fs.Name, with the
// environment read through getenv and exclusive as for Parse, and allows no
// positional argument.
// ok is false when the command must exit with code at once: 0 after --help
// (usage and flags on stdout), 2 after a usage error (on stderr). fs must
// have been created with flag.ContinueOnError; its output is silenced here
// so that every message comes from this function.
func ParseCommand(fs *flag.FlagSet, args []string, getenv func(string) string, usage string, stdout, stderr io.Writer, exclusive ...[]string) (code int, ok bool) {
	silence(fs)
	err := Parse(fs, args, getenv, exclusive...)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q: %s takes flags only", fs.Arg(0), fs.Name())
	}
	return finish(fs, err, usage, stdout, stderr)
}

// ParseCommandArgs is ParseCommand for a command that takes positional
// arguments among its flags (see ParseInterspersed), at least one of which
// is required: without one the error is "no "+what.
func ParseCommandArgs(fs *flag.FlagSet, args []string, getenv func(string) string, usage, what string, stdout, stderr io.Writer) (positional []string, code int, ok bool) {
	silence(fs)
	positional, err := ParseInterspersed(fs, args, getenv)
	if err == nil && len(positional) == 0 {
		err = fmt.Errorf("no %s", what)
	}
	code, ok = finish(fs, err, usage, stdout, stderr)
	return positional, code, ok
}

func silence(fs *flag.FlagSet) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
}

// finish prints the help after --help, or a usage error, and returns the
// exit code; ok is true when there was neither.
func finish(fs *flag.FlagSet, err error, usage string, stdout, stderr io.Writer) (code int, ok bool) {
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "%s\nFlags (each also read from the environment variable shown):\n", usage)
		PrintFlags(stdout, fs)
		return 0, false
	case err != nil:
		return UsageError(stderr, fs.Name(), err), false
	}
	return 0, true
}

// PrintFlags writes the flags of fs to w, each with its environment
// variable, in the layout of flag.PrintDefaults.
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
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
		fmt.Fprintf(w, "\n    \t[$%s]\n", EnvName(fs, f.Name))
	})
}

// UsageError reports err for command on w and returns exit code 2.
func UsageError(w io.Writer, command string, err error) int {
	fmt.Fprintf(w, "%s: %v\nRun '%s --help' for usage.\n", command, err, command)
	return 2
}

// ExitInterrupted is the exit code of a scenario run (one or a matrix) or
// a load stopped by Ctrl-C or SIGTERM before its end, after it wrote what
// it had measured, if anything:
// the shell's 128+SIGINT, so that a script or CI job never takes a cut-short
// run for a passing one.
const ExitInterrupted = 130

// InputError reports err, an input file refused, for command on w and
// returns exit code 2, as for bad usage, with no hint at --help: the flags
// were right, the file is not.
func InputError(w io.Writer, command string, err error) int {
	fmt.Fprintf(w, "%s: %v\n", command, err)
	return 2
}

// ExitCode reports err for command on w and returns 1, or returns 0 for a
// nil err.
func ExitCode(w io.Writer, command string, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(w, "%s: %v\n", command, err)
	return 1
}
