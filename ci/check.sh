#!/usr/bin/env bash
# The project's checks: formatting, go vet, function sizes, staticcheck, the
# tests with the race detector, and the README's blocks as pasted. Run from anywhere; CI runs it through .ci/run.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

section() {
	printf '\n==> %s\n' "$*"
}

section "go version"
go version

section "gofmt"
unformatted="$(gofmt -l .)"
if [[ -n "$unformatted" ]]; then
	echo "These files are not gofmt-formatted (run gofmt -w on them):"
	echo "$unformatted"
	exit 1
fi
echo "ok"

section "go vet -race ./..."
# -race: vet then compiles every package as the tests below do, which
# then reuse it (from a cold cache that halves the compiling).
go vet -race ./...
echo "ok"

section "function sizes (go run ./ci/size)"
go run ./ci/size

section "staticcheck ./..."
# Pinned, fetched through the module proxy like every other module.
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
echo "ok"

section "go test -race ./..."
# CI runs on a machine whose build cache may be warm: a cached pass of the
# container or scenario tests would prove nothing, so every test runs. The
# scenarios package holds the container suite (WireGuard and OpenVPN under
# one schedule, about 6 minutes, twice if the machine starved the first
# run) beside the in-process runs: go test's default bound of 10 minutes a
# package would cut it short; the suite stops itself a minute before the
# bound, in time for its cleanups.
# -p 3: the scenarios package, last in order and the longest (its
# container suite mostly waits out its faults), starts beside the others
# rather than after them.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1 -timeout=30m -p=3"
go test -race ./...

section "README blocks (go run ./ci/readme)"
# Static, as the README's own build line and the tests' binaries are: its
# go run then reuses their compiled packages rather than compiling every
# one again.
export CGO_ENABLED=0
# Every sh block of the README as a new user pastes it, in a fresh clone;
# the scenario runs are started and interrupted after their first progress
# line, and must keep what they measured.
go run ./ci/readme

section "all checks passed"
