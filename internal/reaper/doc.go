// Package reaper waits for the orphans a process inherits as PID 1 (a
// container's init, as `tunnelprobe serve` is in its FROM scratch image)
// or as a child subreaper. The kernel makes every process whose parent
// exits a child of PID 1, which must wait for it when it exits; a Go
// program does not, so each orphan stays in the process table as a
// zombie (<defunct>) until the container ends. A heal command that starts
// a daemon with setsid, or leaves a background job that is then killed,
// leaves one such orphan each time it runs.
//
// # The race with os/exec
//
// Reaping with wait4(-1) in a loop, as simple reapers do (go-reaper's
// default), takes whichever child exited, also one that os/exec's
// Cmd.Wait waits for: that Wait then fails ("no child processes") and the
// command's exit status is lost. tini and dumb-init avoid it by being a
// process of their own whose only child is the program; hashicorp/go-reap
// has the program hold a lock while its own children run, which holds off
// all reaping meanwhile. A [Reaper] instead knows the children it must
// leave to os/exec, those started through [Reaper.Start] until
// [Reaper.Wait] has waited for them, and on each SIGCHLD reads /proc for
// its other children that have exited and waits for each of them by pid.
// Start holds off the reaping while it forks, so that a child that exits
// at once is never taken for an orphan. Every child of the process must
// therefore be started through the Reaper while it runs.
//
// # Concurrency
//
// [New] starts nothing; [Reaper.Run] reaps until its context ends, and
// one Run at a time serves a process. Start and Wait are safe for
// concurrent use, also with Run; a nil *Reaper starts and waits as
// os/exec does. Reaping needs Linux and the PID namespace's own /proc (a
// container has it); elsewhere Run returns an error at once.
package reaper
