#!/usr/bin/env bash
# Server benchmark (issue 18): probly against Debian's redis-server, with
# redis-benchmark (50 clients, random keys in 1M), in one run with every
# server up at the same time and the tests interleaved round by round.
#
#   bench/scripts/server.sh [ROUNDS] > server.csv      (summary on stderr)
#
# Needs redis-server, redis-benchmark, taskset (util-linux) and Go.
# Servers:
#   redis        redis-server --save '' --appendonly yes --appendfsync everysec
#                (like for like with probly's default AOF; port 17391)
#   probly       probly serve, built from this tree, default GOMAXPROCS
#                (the machine's CPUs), --save '' --metrics-addr off (17392)
#   probly-gmp1  the same binary with GOMAXPROCS=1 (17393; unpinned only)
# Placements, switched for the running servers with taskset -a -p:
#   pinned       every server on CPU 1, redis-benchmark on CPU 0
#   unpinned     servers and client free on every CPU
# Commands: PING, SET, GET, PFADD on both (probly ÷ redis for the same
# command) and BF.ADD, BF.EXISTS, CF.ADD, CF.EXISTS on probly (÷ redis's
# PFADD: RedisBloom is not loaded), at pipeline 1 and 16.
# CSV columns:
#   round,placement,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms,cpu_us_per_req
# cpu_us_per_req is the server's user + system CPU time over the test
# (/proc/PID/stat, clock ticks) ÷ requests: the CPU one command costs the
# server, which the rps ratio hides when redis-benchmark (one thread on
# CPU 0 when pinned) is the bottleneck.
# Before the tests: BF.RESERVE bf 0.01 10000000 and CF.RESERVE cf 4000000
# filled with 1M items (for CF.EXISTS); every CF.ADD test uses a fresh
# key reserved with CF.RESERVE … 4000000 (duplicates would fill buckets).
# PROBLY=/path/to/probly benchmarks another binary instead of building.
set -euo pipefail
ROUNDS=${1:-3}
N1=${N1:-100000}   # requests per test at -P 1
N16=${N16:-500000} # requests per test at -P 16
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/scripts/lib.sh"
ports_free 17391 17392 17393
bench_tmp probly-srvbench

bench_build
bench_redis 17391 redis --appendonly yes --appendfsync everysec
RPID=$SPID
bench_probly 17392 probly
PPID2=$SPID
GOMAXPROCS=1 bench_probly 17393 probly-gmp1
PPID1=$SPID
wait_ping 17391 17392 17393
for port in 17392 17393; do
	redis-cli -p "$port" BF.RESERVE bf 0.01 10000000 >/dev/null
	redis-cli -p "$port" CF.RESERVE cf 4000000 >/dev/null
	redis-benchmark -p "$port" -c 50 -n 1000000 -P 16 -r 1000000 CF.ADDNX cf __rand_int__ >/dev/null
done

# place pinned|unpinned: moves every thread of every server.
place() {
	local cpus=0-$(($(nproc) - 1)) p
	[ "$1" = pinned ] && cpus=1
	for p in "$RPID" "$PPID2" "$PPID1"; do taskset -a -p -c "$cpus" "$p" >/dev/null; done
	# Go (1.25+) re-reads its CPU affinity about once a second and sets
	# GOMAXPROCS to it (1 when pinned): let it before the first test.
	sleep 2
}

# run SERVER PORT PIPELINE CMD...: one redis-benchmark test, as CSV rows
# (bench_run), the client on CPU 0 when pinned.
run() {
	local n=$N1 client=() pid c0 c1 row
	[ "$3" = 16 ] && n=$N16
	[ "$placement" = pinned ] && client=(taskset -c 0)
	case $1 in redis) pid=$RPID ;; probly) pid=$PPID2 ;; *) pid=$PPID1 ;; esac
	c0=$(cpu "$pid")
	row=$("${client[@]}" bash -c '. "$0"; round=$1; shift; bench_run "$@"' "$ROOT/bench/scripts/lib.sh" "$round" "$1" "$2" "$3" "$n" "${@:4}" |
		sed "s/^$round,/$round,$placement,/")
	c1=$(cpu "$pid")
	echo "$row,$(echo "scale=3; ($c1 - $c0) * 1000000 / $TCK / $n" | bc)" | tee -a "$TMP/out.csv"
}
# cpu PID: the process's user + system CPU time in clock ticks.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TCK=$(getconf CLK_TCK)

echo "round,placement,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms,cpu_us_per_req" | tee "$TMP/out.csv"
for round in $(seq "$ROUNDS"); do
	for placement in pinned unpinned; do
		place "$placement"
		probly=(probly:17392)
		[ "$placement" = unpinned ] && probly+=(probly-gmp1:17393)
		for pipe in 1 16; do
			for sp in "${probly[@]}"; do
				redis-cli -p "${sp#*:}" CF.RESERVE "cf-$round-$placement-$pipe" 4000000 >/dev/null
			done
			# redis and probly alternate command by command, so drifting
			# load from elsewhere hits both sides.
			for cmd in PING "SET key:__rand_int__ xxxxxxxxxxxxxxxx" "GET key:__rand_int__" "PFADD hll __rand_int__"; do
				# shellcheck disable=SC2086
				run redis 17391 "$pipe" $cmd
				# shellcheck disable=SC2086
				for sp in "${probly[@]}"; do run "${sp%:*}" "${sp#*:}" "$pipe" $cmd; done
			done
			for cmd in "BF.ADD bf __rand_int__" "BF.EXISTS bf __rand_int__" "CF.ADD cf-$round-$placement-$pipe __rand_int__" "CF.EXISTS cf __rand_int__"; do
				# shellcheck disable=SC2086
				for sp in "${probly[@]}"; do run "${sp%:*}" "${sp#*:}" "$pipe" $cmd; done
				run redis 17391 "$pipe" PFADD hll __rand_int__
			done
		done
	done
done
place unpinned

# Summary on stderr (markdown): per placement, pipeline, server and
# command, the median over the rounds of rps, p50 and p99, and the ratio
# to redis (the same command, or PFADD for BF/CF), each round's rps over
# the median of that round's redis runs of the reference command.
if command -v python3 >/dev/null; then
	python3 "$ROOT/bench/scripts/server_summary.py" "$TMP/out.csv" >&2
fi
