#!/usr/bin/env bash
# Benchmark of the load generator on loopback, against the targets of
# issue 4. Not part of the default checks: it takes about three minutes and
# wants the machine to itself (2 cores, 24 GiB are enough).
#
#   bash ci/bench-load.sh            # everything
#   BENCH_OUT=/tmp/bench bash ci/bench-load.sh   # keep the raw results there
#
# It measures, in one run on one machine:
#   1. throughput: iperf3 (Debian's package) against tunnelprobe sink + load
#      with the same number of streams, 8 and 32, 10 s each (target: at
#      least 0.9x iperf3);
#   2. the most concurrent connections held for 30 s (target 50,000), over
#      several sink and load processes and 19 source addresses;
#   3. the connect rate while ramping as fast as possible (target at least
#      15,000 per second), beside ci/connref's plain Go dial loop, the
#      machine's own ceiling for loopback connects;
#   4. memory per idle connection on the load side (target at most 10 KiB);
#   5. the ramp under its own greedy load (issue 35): --connect-rate at
#      ci/connref's rate and at half of it, and as fast as possible, with
#      every connection greedy, interleaved with connref's plain Go dial
#      loop (to its own child and to the same sink) in each of
#      RAMP_ROUNDS rounds (default 2); target at least 0.9 of the rate
#      asked, and as fast as possible at least connref's rate.
#   BENCH_ONLY=ramp bash ci/bench-load.sh   # section 5 alone (about a minute a round)
# Everything runs on 127.0.0.0/8, is bounded in time and stops by itself.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

OUT="${BENCH_OUT:-$(mktemp -d -t bench-load.XXXXXX)}"
mkdir -p "$OUT"
BIN="$OUT/tunnelprobe"

section() { printf '\n==> %s\n' "$*" >&2; }

# Every background process this script starts, so that it can stop them,
# and only them, on any exit.
PIDS=()
cleanup() {
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
}
trap cleanup EXIT

need() {
	local missing=()
	for tool in "$@"; do
		command -v "$tool" >/dev/null || missing+=("$tool")
	done
	if ((${#missing[@]})); then
		section "installing ${missing[*]}"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
	fi
}

# start_sink PROCS: starts a sink on a free port with PROCS processes; sets
# SINK_PID and SINK_ADDR.
start_sink() {
	local log="$OUT/sink-$RANDOM.log"
	"$BIN" sink --listen 127.0.0.1:0 --procs "$1" >"$log" 2>&1 &
	SINK_PID=$!
	PIDS+=("$SINK_PID")
	for _ in $(seq 300); do
		SINK_ADDR="$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$log")"
		[[ -n "$SINK_ADDR" ]] && return 0
		kill -0 "$SINK_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "the sink did not start:" >&2
	cat "$log" >&2
	exit 1
}

# stop_sink: stops the sink and prints its counters.
stop_sink() {
	kill -TERM "$SINK_PID"
	wait "$SINK_PID" || true
}

# load ARGS...: runs the load generator, its summary on stderr. A failed
# run still writes its JSON; the figures show what it achieved.
load() {
	"$BIN" load "$@" >&2 || echo "load exited with $?" >&2
}

# ramp_ratio FILE RATE: the connects of each whole second of FILE's ramp
# (after its first, partial second and before the first where the most
# connections were open: a later second below the peak is a connection
# that broke, not the ramp) over RATE: "mean (min-max, N s)".
ramp_ratio() {
	jq -r --argjson r "$2" '.series as $s | ($s | map(.open) | max) as $peak
		| ([$s | to_entries[] | select(.value.open == $peak)][0].key) as $top
		| [range(1; $top) | $s[.].connects / $r * 100 | round / 100] as $w
		| if ($w | length) > 0 then "\($w | add / length * 100 | round / 100) (\($w | min)-\($w | max), \($w | length) s)"
		  else "no whole second" end' "$1"
}

# ramp_whole FILE RATE: the rate over the whole ramp, from load's
# ramp_seconds (the start until every first dial had ended; the series
# cannot time a ramp of a second or two): connections opened over it, and
# that over RATE.
ramp_whole() {
	jq -r --argjson r "$2" 'if .ramp_seconds then
		(.conns_achieved / .ramp_seconds) as $rate
		| "\(.conns_achieved) in \(.ramp_seconds * 1000 | round / 1000) s: \($rate | floor)/s, \($rate / $r * 100 | round / 100) of \($r)/s"
		else "no ramp time (the ramp did not end)" end' "$1"
}

# 5. The ramp under greedy load. Up to three seconds of ramp at the rate
# the plain dial loop just reached, at half of it, and 15,000 connections
# as fast as possible (connref's count); every connection greedy; one load
# and one sink process as in issue 35, so at most 18,000 connections (open
# files). Tens of thousands of greedy connections would also push the
# kernel into TCP memory pressure, which then sets the pace.
ramp_section() {
	local rounds="${RAMP_ROUNDS:-2}" ref refsink rate conns f
	RAMP_ROWS=()
	echo "machine: $(nproc) cores, $(uptime | sed 's/.*\(load average\)/\1/')" >&2
	for round in $(seq "$rounds"); do
		section "ramp under greedy load, round $round of $rounds"
		"$OUT/connref" -n 15000 >"$OUT/ramp-ref-$round.json"
		ref="$(jq '.connects_per_s | floor' "$OUT/ramp-ref-$round.json")"
		start_sink 1
		"$OUT/connref" -n 15000 -target "$SINK_ADDR" >"$OUT/ramp-refsink-$round.json"
		refsink="$(jq '.connects_per_s | floor' "$OUT/ramp-refsink-$round.json")"
		echo "connref: $ref/s to its child, $refsink/s to the sink" >&2
		for part in full half fast; do
			case $part in
			full) rate=$ref ;;
			half) rate=$((ref / 2)) ;;
			fast) rate=0 ;;
			esac
			f="$OUT/ramp-$part-$round.json"
			conns=$((rate > 0 ? 3 * rate : 15000))
			conns=$((conns > 18000 ? 18000 : conns))
			load --target "$SINK_ADDR" --conns "$conns" --source 127.0.0.2-127.0.0.3 \
				--connect-rate "$rate" --duration 2s --json "$f"
			if ((rate > 0)); then
				RAMP_ROWS+=("| $round | $part: $rate/s | $(ramp_ratio "$f" "$rate") of the rate | $(ramp_whole "$f" "$rate") | $ref/s | $refsink/s |")
			else
				RAMP_ROWS+=("| $round | as fast as possible | $(ramp_ratio "$f" "$ref") of connref, $(ramp_ratio "$f" "$refsink") of connref to the sink | $(ramp_whole "$f" "$ref"), $(ramp_whole "$f" "$refsink" | sed -n 's/.*, \([0-9.]*\) of .*/\1/p') of connref to the sink | $ref/s | $refsink/s |")
			fi
		done
		stop_sink
	done
	echo "machine: $(uptime | sed 's/.*\(load average\)/\1/')" >&2
	section "ramp under greedy load: results (raw JSON in $OUT)"
	cat <<EOF
| round | ramp | connects in each whole second of the ramp | over the whole ramp (ramp_seconds) | connref | connref to the sink |
| --- | --- | --- | --- | --- | --- |
EOF
	printf '%s\n' "${RAMP_ROWS[@]}"
}

section "tools"
need iperf3 jq
go version >&2
iperf3 --version | head -1 >&2

section "build"
CGO_ENABLED=0 go build -o "$BIN" ./cmd/tunnelprobe
CGO_ENABLED=0 go build -o "$OUT/connref" ./ci/connref
echo "$BIN" >&2

if [[ "${BENCH_ONLY:-}" == ramp ]]; then
	ramp_section
	exit 0
fi

# 1. Throughput against iperf3, same streams, same duration.
declare -A IPERF OURS
for P in 8 32; do
	section "throughput, $P streams: iperf3"
	iperf3 -s -B 127.0.0.1 -p 15201 --one-off >/dev/null 2>&1 &
	IPERF_PID=$!
	PIDS+=("$IPERF_PID")
	connected=""
	for _ in $(seq 100); do
		if iperf3 -c 127.0.0.1 -p 15201 -t 10 -P "$P" -J >"$OUT/iperf3-$P.json" 2>/dev/null; then
			connected=1
			break
		fi
		sleep 0.1 # the server is not listening yet
	done
	if [[ -z "$connected" ]]; then
		# A one-off server that never had its client would wait forever.
		kill "$IPERF_PID" 2>/dev/null || true
		echo "iperf3's client failed 100 times against its server on 127.0.0.1:15201, the last with:" >&2
		jq -r '.error' "$OUT/iperf3-$P.json" >&2
		exit 1
	fi
	wait "$IPERF_PID" || true
	IPERF[$P]="$(jq '.end.sum_received.bits_per_second / 1e9' "$OUT/iperf3-$P.json")"
	echo "iperf3: ${IPERF[$P]} Gbit/s" >&2

	section "throughput, $P streams: tunnelprobe"
	start_sink 1
	load --target "$SINK_ADDR" --conns "$P" --duration 10s --json "$OUT/throughput-$P.json"
	stop_sink
	OURS[$P]="$(jq '.bytes_up * 8 / .duration_seconds / 1e9' "$OUT/throughput-$P.json")"
	echo "tunnelprobe: ${OURS[$P]} Gbit/s" >&2
done

# 2. The most connections held for 30 s. 50,000 connections need 50,000
# open files on each side: with 20,000 per process, 4 sink and 6 load
# processes, and 19 source addresses for the ports (28,232 per address).
section "50,000 connections held for 30 s"
start_sink 4
load --target "$SINK_ADDR" --conns 50000 --procs 6 --source 127.0.0.2-127.0.0.20 \
	--connect-rate 0 --rate 10mbit --duration 30s --json "$OUT/held.json"
stop_sink
# Held: the fewest open connections from the first second at the peak to
# the end of the hold (the last second is when they close).
HELD="$(jq '.series as $s | ($s | map(.open) | max) as $peak
	| ([$s | to_entries[] | select(.value.open == $peak)][0].key) as $i
	| (($s[$i:-1] | map(.open) | min) // $peak)' "$OUT/held.json")"
HELD_FOR="$(jq '.series as $s | ($s | map(.open) | max) as $peak
	| ([$s | to_entries[] | select(.value.open == $peak)][0].key) as $i
	| ($s | length) - 1 - $i' "$OUT/held.json")"
HELD_RSS="$(jq '[.series[].rss_bytes] | max / 1048576 | floor' "$OUT/held.json")"

# 3. Connect rate, as fast as possible: 45,000 connections, so that the
# ramp spans whole seconds, over 3 load and 3 sink processes (open files)
# and 4 source addresses (ports).
section "connect rate"
start_sink 3
load --target "$SINK_ADDR" --conns 45000 --procs 3 --source 127.0.0.2-127.0.0.5 \
	--connect-rate 0 --rate 1kbit --duration 3s --json "$OUT/connect-rate.json"
stop_sink
RATE_PEAK="$(jq '[.series[].connects] | max' "$OUT/connect-rate.json")"
# Over the whole ramp: from the start (series[0].t is its whole second) to
# the end of the first second at the peak, so a lower bound.
RATE_AVG="$(jq '.series as $s | ($s | map(.open) | max) as $peak
	| ([$s | to_entries[] | select(.value.open == $peak)][0].key) as $i
	| ((.start | capture("\\.(?<f>[0-9]+)").f) // "0" | "0." + . | tonumber) as $frac
	| ($peak / (($s[$i].t + 1) - ($s[0].t + $frac)) | floor)' "$OUT/connect-rate.json")"

# The reference: a plain net.Dialer loop against a process that only
# accepts, 15,000 connections (one process's open files on each side).
section "connect rate: plain Go dial loop"
"$OUT/connref" -n 15000 >"$OUT/connref.json"
REF_RATE="$(jq '.connects_per_s | floor' "$OUT/connref.json")"
echo "connref: $REF_RATE/s" >&2

# 4. Memory per idle connection: 20,000 connections opened over 10 s with
# next to no traffic; the slope of the load processes' RSS against open
# connections, and their whole RSS divided by the connections.
section "memory per idle connection"
start_sink 2
load --target "$SINK_ADDR" --conns 20000 --procs 2 --source 127.0.0.2-127.0.0.3 \
	--ramp 10s --rate 1kbit --duration 5s --json "$OUT/idle.json"
stop_sink
MEM_SLOPE="$(jq '[.series[] | select(.open > 0)] as $s | ($s[0]) as $a | ($s[-1]) as $b
	| if $b.open > $a.open then (($b.rss_bytes - $a.rss_bytes) / ($b.open - $a.open) / 1024 * 10 | round / 10) else null end' "$OUT/idle.json")"
MEM_RATIO="$(jq '.series | max_by(.open) | (.rss_bytes / .open / 1024 * 10 | round / 10)' "$OUT/idle.json")"

ratio() { jq -n "$1 / $2 * 100 | round / 100"; }
round2() { jq -n "$1 * 100 | round / 100"; }

section "results (raw JSON in $OUT)"
cat <<EOF
| measure | tunnelprobe | reference | target |
| --- | --- | --- | --- |
| throughput, 8 streams, 10 s | $(round2 "${OURS[8]}") Gbit/s | iperf3 $(round2 "${IPERF[8]}") Gbit/s | ratio $(ratio "${OURS[8]}" "${IPERF[8]}") (>= 0.9) |
| throughput, 32 streams, 10 s | $(round2 "${OURS[32]}") Gbit/s | iperf3 $(round2 "${IPERF[32]}") Gbit/s | ratio $(ratio "${OURS[32]}" "${IPERF[32]}") (>= 0.9) |
| concurrent connections held | $HELD for $HELD_FOR s (load RSS peak $HELD_RSS MiB) | | 50,000 for 30 s |
| connect rate, as fast as possible | $RATE_PEAK/s best second, at least $RATE_AVG/s over the whole ramp | plain Go dial loop $REF_RATE/s (ratio $(ratio "$RATE_AVG" "$REF_RATE") over the ramp) | >= 15,000/s |
| memory per idle connection (load side) | $MEM_SLOPE KiB marginal, $MEM_RATIO KiB RSS/conns | | <= 10 KiB |
EOF

echo
ramp_section
