#!/usr/bin/env bash
# Server benchmark: TOPK.ADD and TDIGEST.ADD on probly serve against PFADD
# on redis-server
# (Debian's Redis has no RedisBloom; PFADD is the nearest one-key sketch
# update it has), and probly's own PFADD, with redis-benchmark, 50 clients,
# pipeline 1 and 16, all servers up at the same time and the tests
# interleaved round by round (as hll_server.sh).
#
#   bench/scripts/sketch_server.sh [ROUNDS] > sketch-server.csv
#
# (CMS.INCRBY is in server.sh.)
#
# Servers: redis (no persistence), redis-aof (appendfsync everysec) and
# probly (its default AOF, appendfsync everysec; --save ''). The top-k key
# is TOPK.RESERVE tk 50 2000 7 0.9; the digest TDIGEST.CREATE td (compression
# 100); items and values are random integers in [0, 1M).
# CSV: round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms
set -euo pipefail
ROUNDS=${1:-2}
N1=${N1:-100000}   # requests per test at -P 1
N16=${N16:-500000} # requests per test at -P 16
RPORT=${RPORT:-16397}
PPORT=${PPORT:-16398}
APORT=${APORT:-16399}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/scripts/lib.sh"
bench_three_servers probly-topkbench
redis-cli -p "$PPORT" TOPK.RESERVE tk 50 2000 7 0.9 >/dev/null
redis-cli -p "$PPORT" TDIGEST.CREATE td >/dev/null
run() { bench_run "$@"; }

echo "round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms"
for round in $(seq "$ROUNDS"); do
	for pipe in 1 16; do
		n=$N1
		[ "$pipe" = 16 ] && n=$N16
		run probly "$PPORT" "$pipe" "$n" TOPK.ADD tk __rand_int__
		run probly "$PPORT" "$pipe" "$n" TDIGEST.ADD td __rand_int__
		run redis-aof "$APORT" "$pipe" "$n" PFADD hll __rand_int__
		run probly "$PPORT" "$pipe" "$n" PFADD hll __rand_int__
		run redis "$RPORT" "$pipe" "$n" PFADD hll __rand_int__
	done
done
echo "# probly TOPK.LIST: $(redis-cli -p "$PPORT" TOPK.LIST tk | head -3 | tr '\n' ' ')" >&2
