#!/usr/bin/env bash
# Pinned SET load with automatic AOF rewrites (issue 18): the server on
# CPU 1 (probly with GOMAXPROCS following the affinity), redis-benchmark on
# CPU 0, one server at a time on a fresh data directory, defaults
# (probly: --save '', AOF everysec, automatic rewrites on; redis-server:
# --save '' --appendonly yes --appendfsync everysec).
#
#   bench/scripts/rewrite_set.sh [RUNS] > rewrite_set.txt
#
# Per server: RUNS (default 2) runs of redis-benchmark -c 50 -P 16
# -r 1000000 -n N (default 6000000) SET key:__rand_int__ <16 bytes>, their
# rps, each automatic rewrite's duration (probly: "snapshot saved" log
# lines; redis: the count of finished rewrites) and the RSS after the runs.
# PROBLY=/path/to/probly measures another binary instead of building.
set -euo pipefail
RUNS=${1:-2}
N=${N:-6000000}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/scripts/lib.sh"
ports_free 17471 17472
bench_tmp probly-rewrite
bench_build
load() { # load PORT
	local i
	for i in $(seq "$RUNS"); do
		taskset -c 0 redis-benchmark -p "$1" -c 50 -n "$N" -P 16 -r 1000000 --csv SET key:__rand_int__ xxxxxxxxxxxxxxxx |
			tail -1 | cut -d, -f2 | tr -d '"' | sed "s/^/run $i rps /"
	done
}
rss() { awk '/^VmRSS:/ {print $2 " kB"}' "/proc/$1/status"; }

bench_probly 17472 probly
wait_ping 17472
taskset -a -p -c 1 "$SPID" >/dev/null
sleep 2 # GOMAXPROCS follows the affinity within about a second
echo "probly ($BIN)"
load 17472
{ grep "snapshot saved" "$TMP/probly.log" || true; } | sed 's/.* duration=\([^ ]*\).*/rewrite \1/'
echo "RSS $(rss "$SPID")"
kill "$SPID"

bench_redis 17471 redis --appendonly yes --appendfsync everysec
wait_ping 17471
taskset -a -p -c 1 "$SPID" >/dev/null
echo "redis-server"
load 17471
echo "rewrites $(grep -c 'Background AOF rewrite finished successfully' "$TMP/redis.log" || true)"
echo "RSS $(rss "$SPID")"
