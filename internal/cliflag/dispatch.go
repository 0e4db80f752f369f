package cliflag

import (
	"context"
	"fmt"
	"io"
)

// A Command is one subcommand of a binary. Run gets the arguments after the
// command's name and returns the exit code.
type Command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int
}

// Dispatch runs the command args[0] names with the rest of args and returns
// its exit code. "help", -h and --help list the commands on stdout (0);
// "help NAME" is "NAME --help"; no command or an unknown one is a usage
// error (2), the list on stderr.
func Dispatch(ctx context.Context, binary string, commands []Command, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "%s: no command given\n", binary)
		listCommands(stderr, binary, commands)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		if name != "help" || len(rest) == 0 {
			listCommands(stdout, binary, commands)
			return 0
		}
		name, rest = rest[0], []string{"--help"}
	}
	for _, c := range commands {
		if c.Name == name {
			return c.Run(ctx, rest, getenv, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "%s: unknown command %q\n", binary, name)
	listCommands(stderr, binary, commands)
	return 2
}

// listCommands writes the binary's usage: its commands and how flags,
// the environment and exit codes work for every one of them.
func listCommands(w io.Writer, binary string, commands []Command) {
	fmt.Fprintf(w, "Usage: %s <command> [flags]\n\nCommands:\n", binary)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> --help' for the flags of a command.\n"+
		"Every flag is also read from the environment, the command line winning: %[2]s<FLAG> for %[3]s,\n"+
		"%[2]s<COMMAND>_<FLAG> for the others (dashes as underscores: %[2]sLAB_LINK_RATE sets\n"+
		"lab link's --rate), so that a name means one thing; each --help shows them.\n"+
		"Exit codes: 0 success, 1 the run failed, 2 bad usage or a refused input file,\n"+
		"130 a scenario or load stopped by Ctrl-C or SIGTERM (after writing what it measured).\n", binary, EnvPrefix, bareEnvCommand)
}
