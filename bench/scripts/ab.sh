#!/usr/bin/env bash
# A/B of two probly binaries over sockets (issue 18): both servers and
# redis-server up at the same time, every server pinned to CPU 1 and
# redis-benchmark to CPU 0 (PIN=0: unpinned), the tests alternating
# A, B, redis command by command for ROUNDS rounds.
#
#   bench/scripts/ab.sh A_BINARY B_BINARY [ROUNDS] > ab.csv   (summary on stderr)
#
# Env: PIPES (default "16"), N (requests per test, default 300000),
# CMDS (default "PING|GET key:__rand_int__|PFADD hll __rand_int__|BF.ADD bf __rand_int__").
# A_ENV, B_ENV: environment (VAR=value ...) for server A, B.
# No automatic AOF rewrite on any server (a rewrite during a test costs
# the pinned core seconds of snapshot work: server.sh measures that).
# CSV: round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms,cpu_us_per_req
# (cpu_us_per_req: the server's user + system CPU time over the test, from
# /proc/PID/stat in clock ticks, ÷ requests: what one command costs the
# server, whether or not the client is the bottleneck.)
set -euo pipefail
A=$1
B=$2
ROUNDS=${3:-3}
PIPES=${PIPES:-16}
N=${N:-300000}
CMDS=${CMDS:-"PING|GET key:__rand_int__|PFADD hll __rand_int__|BF.ADD bf __rand_int__"}
PIN=${PIN:-1}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/scripts/lib.sh"
ports_free 17691 17692 17693
bench_tmp probly-ab
mkdir -p "$TMP/redis" "$TMP/a" "$TMP/b"
pin=()
[ "$PIN" = 1 ] && pin=(taskset -c 1)
"${pin[@]}" redis-server --port 17691 --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec --auto-aof-rewrite-percentage 0 --dir "$TMP/redis" --daemonize no >"$TMP/redis.log" 2>&1 &
PIDS+=($!)
declare -A PID
PID[redis]=$!
"${pin[@]}" env ${A_ENV:-} "$A" serve --addr 127.0.0.1:17692 --dir "$TMP/a" --metrics-addr off --save '' --auto-aof-rewrite-percentage 0 >"$TMP/a.log" 2>&1 &
PIDS+=($!)
PID[a]=$!
"${pin[@]}" env ${B_ENV:-} "$B" serve --addr 127.0.0.1:17693 --dir "$TMP/b" --metrics-addr off --save '' --auto-aof-rewrite-percentage 0 >"$TMP/b.log" 2>&1 &
PIDS+=($!)
PID[b]=$!
wait_ping 17691 17692 17693
for port in 17692 17693; do redis-cli -p "$port" BF.RESERVE bf 0.01 10000000 >/dev/null; done
client=()
[ "$PIN" = 1 ] && client=(taskset -c 0)
# cpu PID: the process's user + system CPU time in clock ticks.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TCK=$(getconf CLK_TCK)
echo "round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms,cpu_us_per_req" | tee "$TMP/out.csv"
IFS='|' read -r -a cmds <<<"$CMDS"
for round in $(seq "$ROUNDS"); do
	for pipe in $PIPES; do
		for cmd in "${cmds[@]}"; do
			for sp in a:17692 b:17693 redis:17691; do
				case "$cmd" in BF.*) [ "${sp%:*}" = redis ] && continue ;; esac
				c0=$(cpu "${PID[${sp%:*}]}")
				# shellcheck disable=SC2086
				row=$("${client[@]}" bash -c '. "$0"; round=$1; shift; bench_run "$@"' "$ROOT/bench/scripts/lib.sh" \
					"$round" "${sp%:*}" "${sp#*:}" "$pipe" "$N" $cmd)
				c1=$(cpu "${PID[${sp%:*}]}")
				echo "$row,$(echo "scale=3; ($c1 - $c0) * 1000000 / $TCK / $N" | bc)" | tee -a "$TMP/out.csv"
			done
		done
	done
done
grep -i 'rewrit' "$TMP"/a.log "$TMP"/b.log >&2 || true
python3 - "$TMP/out.csv" >&2 <<'PY'
import csv, statistics as st, sys
from collections import defaultdict
d = defaultdict(list)
for r in csv.DictReader(open(sys.argv[1])):
    d[(r['pipeline'], r['command'], r['server'])].append((float(r['rps']), float(r['cpu_us_per_req'])))
print("| -P | command | A rps | B rps | B ÷ A rps (per round) | redis rps | A CPU µs/req | B CPU µs/req | redis CPU µs/req |")
print("|---|---|---|---|---|---|---|---|---|")
med = lambda v, i: f"{st.median(x[i] for x in v):,.{0 if i == 0 else 2}f}" if v else "–"
for (p, c) in sorted({(k[0], k[1]) for k in d}, key=lambda x: (int(x[0]), x[1])):
    a, b, r = d[(p, c, 'a')], d[(p, c, 'b')], d[(p, c, 'redis')]
    ratios = [y[0] / x[0] for x, y in zip(a, b)]
    print(f"| {p} | {c} | {med(a, 0)} | {med(b, 0)} | {st.median(ratios):.2f} ({', '.join(f'{x:.2f}' for x in ratios)}) "
          f"| {med(r, 0)} | {med(a, 1)} | {med(b, 1)} | {med(r, 1)} |")
PY
