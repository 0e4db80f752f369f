#!/usr/bin/env bash
# The status endpoint's speed against the bare net/http handler it sits in
# (issue 35: both the text and the JSON status at least 0.95x the bare
# handler's rate in the same run). ci/benchstatus serves the bare handler,
# the bare handler with the status's headers, and the status (text and
# ?format=json) on loopback; wrk (Debian's package) loads each in turn,
# never two at once, and each round's ratios are taken against the mean
# of the bare runs before and after it, so that a machine whose load
# drifts during the round shifts both sides alike.
# Not part of the default checks: about 80 s; wants the machine to itself.
#
#   bash ci/bench-status.sh
#   STATUS_ROUNDS=5 STATUS_WRK="-t2 -c64 -d10s" bash ci/bench-status.sh
#   STATUS_SERVER=/path/benchstatus bash ci/bench-status.sh   # a benchstatus built elsewhere (another commit)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

command -v wrk >/dev/null || { echo "bench-status: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
ROUNDS="${STATUS_ROUNDS:-3}"
read -r -a WRK_ARGS <<<"${STATUS_WRK:--t2 -c64 -d5s}"

OUT="$(mktemp -d -t bench-status.XXXXXX)"

SERVER=""
cleanup() {
	exec 3>&- # the server exits when its stdin closes
	[[ -n "$SERVER" ]] && wait "$SERVER" 2>/dev/null || true
	rm -rf "$OUT"
}
trap cleanup EXIT

# Building is not measured: at the lowest priority.
if [[ -n "${STATUS_SERVER:-}" ]]; then
	cp "$STATUS_SERVER" "$OUT/benchstatus"
else
	nice -n 19 go build -o "$OUT/benchstatus" ./ci/benchstatus
fi
mkfifo "$OUT/stdin"
"$OUT/benchstatus" <"$OUT/stdin" >"$OUT/addrs" 2>"$OUT/server.log" &
SERVER=$!
exec 3>"$OUT/stdin"
for _ in $(seq 1 50); do
	[[ $(wc -l <"$OUT/addrs") -ge 3 ]] && break
	sleep 0.1
done
addr() { awk -v n="$1" '$1 == n { print $2 }' "$OUT/addrs"; }
BARE="http://$(addr bare)/"
HEADERS="http://$(addr headers)/"
STATUS="http://$(addr status)/"
[[ "$BARE" != "http:///" && "$STATUS" != "http:///" ]] || { echo "benchstatus did not start:"; cat "$OUT/server.log"; exit 1; }

# cpu prints the server's CPU time so far, user and system, in clock ticks.
cpu() { awk '{ print $14 + $15 }' "/proc/$SERVER/stat"; }
TICK_US=$((1000000 / $(getconf CLK_TCK)))

# rate URL sets R to wrk's requests per second for URL and C to the
# server's CPU time per request in microseconds (only URL is loaded meanwhile: the CPU
# is its, and unlike the rate it hardly moves with the machine's load).
# Any answer that is not 2xx, or a connect, read or write error, fails the
# run: the rate would not be the endpoint's. wrk's timeouts (no answer
# within 2 s) are the machine stalling, not the endpoint failing: they are
# counted in STALLS, and the round is marked.
rate() {
	local out c0 c1
	c0="$(cpu)"
	out="$(wrk "${WRK_ARGS[@]}" "$1")"
	c1="$(cpu)"
	if grep -qE 'Non-2xx|Socket errors: connect [1-9]|read [1-9]|write [1-9]' <<<"$out"; then
		printf 'bench-status: errors loading %s:\n%s\n' "$1" "$out" >&2
		exit 1
	fi
	if grep -qE 'timeout [1-9]' <<<"$out"; then
		STALLS=$((STALLS + $(sed -n 's/.*timeout \([0-9]*\).*/\1/p' <<<"$out")))
	fi
	read -r R C < <(awk -v c="$((c1 - c0))" -v us="$TICK_US" \
		'/requests in/ { n = $1 } /^Requests\/sec:/ { r = $2 } END { printf "%s %.2f\n", r, c * us / n }' <<<"$out")
}

# One round unmeasured, so that neither side pays for a cold start.
wrk -t1 -c8 -d1s "$BARE" >/dev/null
wrk -t1 -c8 -d1s "$STATUS" >/dev/null

echo "wrk ${WRK_ARGS[*]}, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
printf '%-6s %19s %19s %19s %19s %19s  %s\n' round "bare r/s cpu_us" "headers r/s cpu_us" "text r/s cpu_us" \
	"json r/s cpu_us" "bare_after r/s cpu_us" "rate ratios to the bare mean: headers text json"
RATIOS="$OUT/ratios"
for round in $(seq 1 "$ROUNDS"); do
	STALLS=0
	rate "$BARE"
	b1="$R" cb1="$C"
	rate "$HEADERS"
	hd="$R" chd="$C"
	rate "$STATUS"
	tx="$R" ctx="$C"
	rate "$STATUS?format=json"
	js="$R" cjs="$C"
	rate "$BARE"
	b2="$R" cb2="$C"
	# Rate ratios, and CPU ratios: the bare handler's CPU per request over
	# the endpoint's, 1 where they cost the same.
	read -r rh rt rj ch ct cj < <(awk -v b1="$b1" -v b2="$b2" -v h="$hd" -v t="$tx" -v j="$js" \
		-v cb1="$cb1" -v cb2="$cb2" -v ch="$chd" -v ct="$ctx" -v cj="$cjs" 'BEGIN {
			b = (b1 + b2) / 2; cb = (cb1 + cb2) / 2
			printf "%.3f %.3f %.3f %.3f %.3f %.3f\n", h / b, t / b, j / b, cb / ch, cb / ct, cb / cj }')
	stalled=""
	[[ "$STALLS" -gt 0 ]] && stalled="  (stalled: $STALLS requests unanswered for 2 s)"
	printf '%-6s %12.0f %6s %12.0f %6s %12.0f %6s %12.0f %6s %12.0f %6s  %s %s %s%s\n' "$round" \
		"$b1" "$cb1" "$hd" "$chd" "$tx" "$ctx" "$js" "$cjs" "$b2" "$cb2" "$rh" "$rt" "$rj" "$stalled"
	echo "$rh $rt $rj $ch $ct $cj" >>"$RATIOS"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
# median K prints the median of column K of the ratios.
median() { sort -n -k"$1" "$RATIOS" | awk -v k="$1" '{ v[NR] = $k } END { printf "%.3f", v[int((NR + 1) / 2)] }'; }
# spread K prints the lowest and highest of column K: with five rounds or
# more, the second lowest and second highest, so that one stalled round
# does not set the interval.
spread() { sort -n -k"$1" "$RATIOS" | awk -v k="$1" '{ v[NR] = $k } END { t = NR >= 5 ? 1 : 0; printf "%.3f-%.3f", v[1 + t], v[NR - t] }'; }
echo "median rate ratio: text $(median 2)x, JSON $(median 3)x, bare with the same headers $(median 1)x (target: text and JSON at least 0.95x)"
echo "rate ratio over the rounds ($( ((ROUNDS >= 5)) && echo "without the lowest and the highest" || echo "lowest to highest")): text $(spread 2), JSON $(spread 3), bare with the same headers $(spread 1)"
echo "median CPU ratio (the bare handler's CPU per request over the endpoint's): text $(median 5)x, JSON $(median 6)x, bare with the same headers $(median 4)x"
