#!/usr/bin/env bash
# How long `tunnelprobe load` takes to stop on SIGTERM while greedy
# connections keep the machine busy: the README's "stops within 2 s".
# Not part of the default checks (about two minutes; wants the machine to
# itself). Everything runs on 127.0.0.1, is bounded and stops by itself.
#
#   bash ci/bench-stop.sh               # 14,000 and 16,000 connections, 5 runs each
#   STOP_CONNS="16000" STOP_RUNS=8 bash ci/bench-stop.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

OUT="$(mktemp -d -t bench-stop.XXXXXX)"
BIN="$OUT/tunnelprobe"
go build -o "$BIN" ./cmd/tunnelprobe

"$BIN" sink --listen 127.0.0.1:0 >"$OUT/sink.log" 2>&1 &
SINK=$!
trap 'kill -TERM "$SINK" 2>/dev/null || true; wait "$SINK" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
	ADDR="$(sed -n 's/^.*listening on \([0-9.:]*\).*$/\1/p' "$OUT/sink.log" | head -n 1)"
	[[ -n "$ADDR" ]] && break
	sleep 0.1
done
[[ -n "$ADDR" ]] || { echo "the sink did not start:"; cat "$OUT/sink.log"; exit 1; }

echo "conns run seconds_from_SIGTERM_to_exit"
for n in ${STOP_CONNS:-14000 16000}; do
	for i in $(seq 1 "${STOP_RUNS:-5}"); do
		"$BIN" load --target "$ADDR" --conns "$n" --duration 60s --json "$OUT/run-$n-$i.json" >/dev/null 2>&1 &
		pid=$!
		sleep 10 # the ramp and some hold: every connection is busy
		t0=$(date +%s%N)
		kill -TERM "$pid"
		wait "$pid" || true
		t1=$(date +%s%N)
		printf '%d %d %.2f\n' "$n" "$i" "$(echo "($t1 - $t0) / 1000000000" | bc -l)"
	done
done
