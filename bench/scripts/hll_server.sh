#!/usr/bin/env bash
# Server benchmark: PFADD / PFCOUNT, probly serve against redis-server, with
# redis-benchmark, 50 clients, pipeline 1 and 16, both servers up at the same
# time and the tests interleaved round by round (as scripts/server.sh).
#
#   bench/scripts/hll_server.sh [ROUNDS] > hll-server.csv
#
# Servers (free loopback ports, 16394-16396 by default):
#   redis      redis-server --save '' --appendonly no     (no persistence)
#   redis-aof  redis-server --save '' --appendonly yes --appendfsync everysec
#              (like for like with probly's default AOF)
#   probly     probly serve --metrics-addr off --save '' --dir <temp>
#              (its default AOF, appendfsync everysec, stays on; metrics are
#              still recorded, only the HTTP listener is off)
# CSV: round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms
set -euo pipefail
ROUNDS=${1:-2}
N1=${N1:-200000}    # requests per test at -P 1
N16=${N16:-1000000} # requests per test at -P 16
RPORT=${RPORT:-16394}
PPORT=${PPORT:-16395}
APORT=${APORT:-16396}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/scripts/lib.sh"
bench_three_servers probly-hllbench
run() { bench_run "$@"; }

echo "round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms"
for round in $(seq "$ROUNDS"); do
	for pipe in 1 16; do
		n=$N1
		[ "$pipe" = 16 ] && n=$N16
		run redis-aof "$APORT" "$pipe" "$n" PFADD hll __rand_int__
		run probly "$PPORT" "$pipe" "$n" PFADD hll __rand_int__
		run redis "$RPORT" "$pipe" "$n" PFADD hll __rand_int__
		run redis-aof "$APORT" "$pipe" "$n" PFCOUNT hll
		run probly "$PPORT" "$pipe" "$n" PFCOUNT hll
		run redis "$RPORT" "$pipe" "$n" PFCOUNT hll
	done
done
# Final check: both keys dense, estimates close.
echo "# redis  PFCOUNT=$(redis-cli -p "$RPORT" PFCOUNT hll)" >&2
echo "# redis-aof PFCOUNT=$(redis-cli -p "$APORT" PFCOUNT hll)" >&2
echo "# probly PFCOUNT=$(redis-cli -p "$PPORT" PFCOUNT hll)" >&2
