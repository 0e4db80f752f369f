// Package cliflag is the flag machinery of the tunnelprobe commands, on top
// of the standard flag package: every flag is also read from an environment
// variable (TUNNELPROBE_<FLAG> for serve, TUNNELPROBE_<COMMAND>_<FLAG> for
// the others: one meaning per name, see EnvName), the command line winning; help
// lists each flag with its variable; errors name flags with two dashes, and
// usage errors exit with code 2. The values (durations that must be
// positive, bounded integers, host:port addresses, lists) check their text
// when they are set, so a bad value is a usage error naming its flag.
package cliflag
