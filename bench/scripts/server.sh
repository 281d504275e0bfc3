#!/usr/bin/env bash
# Server benchmark: probly BF.ADD / BF.EXISTS against redis-server PFADD,
# with redis-benchmark, 50 clients, pipeline 1 and 16, all in one run with the
# servers up at the same time and the tests interleaved round by round.
#
#   bench/scripts/server.sh [ROUNDS] > server.csv
#
# Needs redis-server and redis-benchmark (Debian: apt-get install redis-server)
# and Go. Prints one CSV line per measurement:
#   round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms
# Servers (ports 16390-16393):
#   redis        redis-server --save '' --appendonly no       (no persistence)
#   redis-aof    redis-server --appendonly yes --appendfsync everysec
#   probly       probly serve (default: AOF, appendfsync everysec)
#   probly-no    probly serve --appendfsync no  (AOF written, never fsynced)
# Both probly instances also get --save '' (no automatic snapshots, as the
# redis-servers) and --metrics-addr off, when the binary has those flags.
set -euo pipefail
ROUNDS=${1:-3}
N1=${N1:-200000}   # requests per test at -P 1
N16=${N16:-1000000} # requests per test at -P 16
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d /tmp/probly-srvbench.XXXXXX)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

(cd "$ROOT" && go build -o "$TMP/bin/probly" ./cmd/probly)

mkdir -p "$TMP/redis" "$TMP/redis-aof" "$TMP/probly" "$TMP/probly-no"
# Like the redis-servers: no automatic snapshots, and (two instances) no
# metrics listener, when this probly has those flags.
EXTRA=()
help=$("$TMP/bin/probly" serve --help 2>&1)
grep -q -- '--metrics-addr' <<<"$help" && EXTRA+=(--metrics-addr off)
grep -q -- '--save' <<<"$help" && EXTRA+=(--save '')
redis-server --port 16390 --save '' --appendonly no --dir "$TMP/redis" --daemonize no >"$TMP/redis.log" 2>&1 &
PIDS+=($!)
redis-server --port 16391 --save '' --appendonly yes --appendfsync everysec --dir "$TMP/redis-aof" --daemonize no >"$TMP/redis-aof.log" 2>&1 &
PIDS+=($!)
"$TMP/bin/probly" serve --addr 127.0.0.1:16392 --dir "$TMP/probly" "${EXTRA[@]}" >"$TMP/probly.log" 2>&1 &
PIDS+=($!)
"$TMP/bin/probly" serve --addr 127.0.0.1:16393 --dir "$TMP/probly-no" --appendfsync no "${EXTRA[@]}" >"$TMP/probly-no.log" 2>&1 &
PIDS+=($!)
for port in 16390 16391 16392 16393; do
	for i in $(seq 300); do
		redis-cli -p $port PING 2>/dev/null | grep -q PONG && break
		if [ "$i" = 300 ]; then echo "server on port $port did not start:" >&2; cat "$TMP"/*.log >&2; exit 1; fi
		sleep 0.1
	done
done
for port in 16392 16393; do
	redis-cli -p $port BF.RESERVE bf 0.01 10000000 >/dev/null
done

# run SERVER PORT PIPELINE N CMD...
run() {
	local name=$1 port=$2 pipe=$3 n=$4
	shift 4
	redis-benchmark -p "$port" -c 50 -n "$n" -P "$pipe" -r 1000000 --csv "$@" |
		tail -n +2 | tr -d '"' | while IFS=, read -r _ rps avg min p50 p95 p99 max; do
		echo "$round,$name,$pipe,$1,$rps,$avg,$min,$p50,$p95,$p99,$max"
	done
}

echo "round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms"
for round in $(seq "$ROUNDS"); do
	for pipe in 1 16; do
		n=$N1
		[ "$pipe" = 16 ] && n=$N16
		run redis 16390 "$pipe" "$n" PFADD hll __rand_int__
		run probly 16392 "$pipe" "$n" BF.ADD bf __rand_int__
		run redis-aof 16391 "$pipe" "$n" PFADD hll __rand_int__
		run probly-no 16393 "$pipe" "$n" BF.ADD bf __rand_int__
		run probly 16392 "$pipe" "$n" BF.EXISTS bf __rand_int__
		run probly-no 16393 "$pipe" "$n" BF.EXISTS bf __rand_int__
	done
done
