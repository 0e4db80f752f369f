// Package serveflags is the health server's command line: the flags of
// tunnelprobe serve, which the lab's roles share for the health server they
// run beside the client peer, and how they become a server.Config and the
// checks. Each flag is also read from TUNNELPROBE_<FLAG> for serve and
// TUNNELPROBE_<COMMAND>_<FLAG> for a lab role (package cliflag);
// errors name the flags.
package serveflags
