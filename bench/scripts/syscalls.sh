#!/usr/bin/env bash
# System calls and CPU per request (issue 18): redis-server and probly,
# pinned (each server on CPU 1 with GOMAXPROCS=1 for probly, redis-benchmark
# on CPU 0), one redis-benchmark test per server and command, in turn.
#
#   bench/scripts/syscalls.sh > syscalls.csv
#
# Per test: read and write system calls of the server (syscr, syscw of
# /proc/PID/io) and its user + system CPU time (/proc/PID/stat), each over
# the test ÷ requests. CSV:
# server,pipeline,command,rps,reads_per_req,writes_per_req,cpu_us_per_req.
# P (default "16 1") pipelines, N (default 2000000, ÷ 8 at -P 1) requests,
# CMDS (default PING and PFADD on both, BF.ADD on probly: a 10M-item
# filter reserved first) the commands. PROBLY=/path/to/probly measures
# another binary instead of building.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/scripts/lib.sh"
ports_free 17481 17482
bench_tmp probly-syscalls
bench_build
bench_redis 17481 redis --appendonly yes --appendfsync everysec
RPID=$SPID
GOMAXPROCS=1 bench_probly 17482 probly
PPID2=$SPID
wait_ping 17481 17482
for p in "$RPID" "$PPID2"; do taskset -a -p -c 1 "$p" >/dev/null; done
redis-cli -p 17482 BF.RESERVE bf 0.01 10000000 >/dev/null
N=${N:-2000000}
io() { awk '/^syscr|^syscw/ {printf "%s ", $2}' "/proc/$1/io"; }
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TCK=$(getconf CLK_TCK)
echo "server,pipeline,command,rps,reads_per_req,writes_per_req,cpu_us_per_req"
for pipe in ${P:-16 1}; do
	n=$N
	[ "$pipe" = 1 ] && n=$((N / 8))
	while IFS= read -r cmd; do
		[ -n "$cmd" ] || continue
		for s in "redis $RPID 17481" "probly $PPID2 17482"; do
			read -r name pid port <<<"$s"
			case $cmd in BF.*) [ "$name" = probly ] || continue ;; esac
			read -r r0 w0 <<<"$(io "$pid")"
			c0=$(cpu "$pid")
			# shellcheck disable=SC2086
			rps=$(taskset -c 0 redis-benchmark -p "$port" -c 50 -n "$n" -P "$pipe" -r 1000000 --csv $cmd | tail -1 | cut -d, -f2 | tr -d '"')
			read -r r1 w1 <<<"$(io "$pid")"
			c1=$(cpu "$pid")
			echo "$name,$pipe,${cmd%% *},$rps,$(echo "scale=4; ($r1 - $r0) / $n" | bc),$(echo "scale=4; ($w1 - $w0) / $n" | bc),$(echo "scale=3; ($c1 - $c0) * 1000000 / $TCK / $n" | bc)"
		done
	done <<<"${CMDS:-PING
PFADD hll __rand_int__
BF.ADD bf __rand_int__}"
done
