#!/usr/bin/env bash
# Server benchmark: probly BF.ADD / BF.EXISTS / CF.ADD / PFADD / CMS.INCRBY against
# redis-server PFADD, with redis-benchmark, 50 clients, pipeline 1 and 16,
# all in one run with the servers up at the same time and the tests
# interleaved round by round.
#
#   bench/scripts/server.sh [ROUNDS] > server.csv
#
# Needs redis-server and redis-benchmark (Debian: apt-get install redis-server)
# and Go. Prints one CSV line per measurement:
#   round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms
# Servers (ports 16390-16393):
#   redis        redis-server --save '' --appendonly no       (no persistence)
#   redis-aof    redis-server --save '' --appendonly yes --appendfsync everysec
#                (like for like with probly's default: the target's reference)
#   probly       probly serve (default: AOF, appendfsync everysec), built
#                from this tree
#   probly-base  only if PROBLY_BASE=/path/to/probly is set: another probly
#                binary (for example the previous commit), same flags
# Both probly instances get --save '' (no automatic snapshots, as the
# redis-servers) and --metrics-addr off (no HTTP listener; the metrics
# themselves are still recorded), when the binary has those flags.
# Before the tests: BF.RESERVE bf 0.01 10000000 (no link growth), and every
# CF.ADD test uses a fresh key reserved with CF.RESERVE cf-R-P 4000000;
# CMS.INCRBY increments random items by 1 in CMS.INITBYPROB cms 0.001 0.01
# (2000 × 7).
set -euo pipefail
ROUNDS=${1:-3}
N1=${N1:-200000}   # requests per test at -P 1
N16=${N16:-1000000} # requests per test at -P 16
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/scripts/lib.sh"
bench_tmp probly-srvbench

(cd "$ROOT" && go build -o "$TMP/bin/probly" ./cmd/probly)

mkdir -p "$TMP/redis" "$TMP/redis-aof" "$TMP/probly" "$TMP/probly-base"
# probly flags: no automatic snapshots and no metrics listener, when the
# binary has those flags.
extra() {
	local help
	help=$("$1" serve --help 2>&1)
	EXTRA=()
	if grep -q -- '--metrics-addr' <<<"$help"; then EXTRA+=(--metrics-addr off); fi
	if grep -q -- '--save' <<<"$help"; then EXTRA+=(--save ''); fi
}
redis-server --port 16390 --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP/redis" --daemonize no >"$TMP/redis.log" 2>&1 &
PIDS+=($!)
redis-server --port 16391 --bind 127.0.0.1 --save '' --appendonly yes --appendfsync everysec --dir "$TMP/redis-aof" --daemonize no >"$TMP/redis-aof.log" 2>&1 &
PIDS+=($!)
extra "$TMP/bin/probly"
"$TMP/bin/probly" serve --addr 127.0.0.1:16392 --dir "$TMP/probly" "${EXTRA[@]}" >"$TMP/probly.log" 2>&1 &
PIDS+=($!)
PORTS=(16390 16391 16392)
PROBLYS=(probly:16392)
if [ -n "${PROBLY_BASE:-}" ]; then
	extra "$PROBLY_BASE"
	"$PROBLY_BASE" serve --addr 127.0.0.1:16393 --dir "$TMP/probly-base" "${EXTRA[@]}" >"$TMP/probly-base.log" 2>&1 &
	PIDS+=($!)
	PORTS+=(16393)
	PROBLYS+=(probly-base:16393)
fi
wait_ping "${PORTS[@]}"
for sp in "${PROBLYS[@]}"; do
	redis-cli -p "${sp#*:}" BF.RESERVE bf 0.01 10000000 >/dev/null
	redis-cli -p "${sp#*:}" CMS.INITBYPROB cms 0.001 0.01 >/dev/null 2>&1 || true
done

# run SERVER PORT PIPELINE N CMD...: bench_run, also kept for the summary.
run() { bench_run "$@" | tee -a "$TMP/out.csv"; }

echo "round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms" | tee "$TMP/out.csv"
for round in $(seq "$ROUNDS"); do
	for pipe in 1 16; do
		n=$N1
		[ "$pipe" = 16 ] && n=$N16
		for sp in "${PROBLYS[@]}"; do
			redis-cli -p "${sp#*:}" CF.RESERVE "cf-$round-$pipe" 4000000 >/dev/null
		done
		# Each probly test sits between two redis-aof runs or next to a
		# redis run, so drifting load hits both sides.
		run redis-aof 16391 "$pipe" "$n" PFADD hll __rand_int__
		for sp in "${PROBLYS[@]}"; do run "${sp%:*}" "${sp#*:}" "$pipe" "$n" BF.ADD bf __rand_int__; done
		run redis 16390 "$pipe" "$n" PFADD hll __rand_int__
		for sp in "${PROBLYS[@]}"; do run "${sp%:*}" "${sp#*:}" "$pipe" "$n" BF.EXISTS bf __rand_int__; done
		run redis-aof 16391 "$pipe" "$n" PFADD hll __rand_int__
		for sp in "${PROBLYS[@]}"; do run "${sp%:*}" "${sp#*:}" "$pipe" "$n" CF.ADD "cf-$round-$pipe" __rand_int__; done
		for sp in "${PROBLYS[@]}"; do run "${sp%:*}" "${sp#*:}" "$pipe" "$n" PFADD hll __rand_int__; done
		run redis-aof 16391 "$pipe" "$n" PFADD hll __rand_int__
		for sp in "${PROBLYS[@]}"; do run "${sp%:*}" "${sp#*:}" "$pipe" "$n" CMS.INCRBY cms __rand_int__ 1; done
		run redis 16390 "$pipe" "$n" PFADD hll __rand_int__
	done
done

# Summary on stderr: per server and command, the median over the rounds of
# rps, p50 and p99, and the ratio to redis-aof's (like for like) and redis's
# PFADD, each round's rps divided by the median of that round's redis runs
# at the same pipeline; median (min-max) over the rounds.
if command -v python3 >/dev/null; then
	python3 - "$TMP/out.csv" >&2 <<'PY'
import csv, sys, statistics as st
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
d = defaultdict(list)
for r in rows:
    d[(r['round'], r['pipeline'], r['server'], r['command'])].append(
        (float(r['rps']), float(r['p50_ms']), float(r['p99_ms'])))
rounds = sorted({r['round'] for r in rows}, key=int)
for p in sorted({r['pipeline'] for r in rows}, key=int):
    print(f"-P {p}: server command, median rps, p50 ms, p99 ms, / redis-aof PFADD, / redis PFADD")
    for s, c in sorted({(r['server'], r['command']) for r in rows}):
        rps, p50, p99, ra, rn = [], [], [], [], []
        for rd in rounds:
            v = d.get((rd, p, s, c))
            if not v:
                continue
            x = st.median(a for a, _, _ in v)
            rps.append(x); p50 += [b for _, b, _ in v]; p99 += [e for _, _, e in v]
            for ref, out in (('redis-aof', ra), ('redis', rn)):
                w = d.get((rd, p, ref, 'PFADD'))
                if w:
                    out.append(x / st.median(a for a, _, _ in w))
        f = lambda r: f"{st.median(r):.2f} ({min(r):.2f}-{max(r):.2f})" if r else "-"
        print(f"  {s} {c}: {st.median(rps):.0f}, {st.median(p50):.3f}, {st.median(p99):.3f}, {f(ra)}, {f(rn)}")
PY
fi
