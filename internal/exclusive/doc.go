// Package exclusive lets the tests that load this machine and judge what
// they measure (a run's utilisation, how fast a configuration detected an
// outage) take turns at it, across the test binaries that go test runs
// side by side: beside each other each would measure the others.
//
// [Machine] holds the turn until its test ends; [Lock] until its caller
// gives it back. The turn is an exclusive lock on a file in os.TempDir
// (flock on Unix), so a process that dies gives it back with its
// descriptors; elsewhere every caller has it at once.
package exclusive
