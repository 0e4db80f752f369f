// Package childproc runs a command split over child processes of this
// binary (load and sink --procs), each with its own limit of open files.
//
// # Parent
//
// A [Fleet] starts one child per configuration, made by its Command (see
// [Self] for a program that runs itself), and sends each its configuration
// as a JSON line on its stdin. It waits until every child says it is ready
// (at most StartTimeout), then calls OnReady, which may send every child
// one more line (a start time, say), and hands each message a child reports
// to Receive until the child exits. The first child that fails (says why,
// exits before it is ready, exits with an error, or exits at all while
// Fleet.Lasting) stops the others and is [Fleet.Run]'s error, a
// [*ChildError]; with Fleet.KeepGoing, a child that fails once all are
// ready leaves the others to finish, and Run returns every child's failure
// joined. The end of Run's context stops every child as Ctrl-C
// would, with SIGTERM, so that it still reports what it measured; a child
// is killed only if it has not exited [WaitDelay] later.
//
// # Child
//
// [RunChild] is the other end: it reads the configuration, runs the
// command's own function with a [Parent] to report through, and tells the
// parent the error that function returns.
//
// # Wire format
//
// Parent to child: JSON lines, the configuration first. Child to parent:
// JSON lines, each a [Message]. The format is private to the binary: parent
// and child are always the same program.
//
// # Concurrency
//
// Run blocks until every child it started has exited, and it starts one
// goroutine per child that it waits for; Receive is called from those, one
// goroutine per child, so calls for different children run at once.
// RunChild reads stdin in a goroutine, so that its context can end a wait
// for the parent; that goroutine ends when stdin does (in a child process:
// when the parent closes the pipe, or the process exits).
package childproc
