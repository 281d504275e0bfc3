# Shared by the server benchmarks (source it, do not run it): a temporary
# folder cleaned up on exit with every server started, building probly and
# starting probly and redis-server, a wait for servers to answer PING, and
# one redis-benchmark test as CSV rows.

# bench_tmp PREFIX: sets TMP to a new temporary folder and PIDS to an empty
# list; on exit, kills every PID in PIDS and removes TMP.
bench_tmp() {
	TMP=$(mktemp -d "/tmp/$1.XXXXXX")
	PIDS=()
	trap bench_cleanup EXIT
}

bench_cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}

# wait_ping PORT...: waits up to 30 s for each server to answer PING; if one
# does not, prints every log in TMP and exits 1.
wait_ping() {
	local port i
	for port in "$@"; do
		for i in $(seq 300); do
			redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break
			if [ "$i" = 300 ]; then echo "server on port $port did not start:" >&2; cat "$TMP"/*.log >&2; exit 1; fi
			sleep 0.1
		done
	done
}

# bench_run SERVER PORT PIPELINE N CMD...: one redis-benchmark test (50
# clients, random keys in 1M) printed as rows of
# round,server,pipeline,command,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms
# ($round is the caller's).
bench_run() {
	local name=$1 port=$2 pipe=$3 n=$4
	shift 4
	redis-benchmark -p "$port" -c 50 -n "$n" -P "$pipe" -r 1000000 --csv "$@" |
		tail -n +2 | tr -d '"' | while IFS=, read -r _ rps avg min p50 p95 p99 max; do
		echo "$round,$name,$pipe,$1,$rps,$avg,$min,$p50,$p95,$p99,$max"
	done
}

# bench_build: sets BIN to $PROBLY if set (measure another binary), else
# builds probly from ROOT into TMP/bin and sets BIN to it.
bench_build() {
	BIN=${PROBLY:-}
	if [ -z "$BIN" ]; then
		(cd "$ROOT" && go build -o "$TMP/bin/probly" ./cmd/probly)
		BIN=$TMP/bin/probly
	fi
}

# bench_redis PORT NAME ARG...: starts redis-server on 127.0.0.1:PORT
# without snapshots, in TMP/NAME with its log in TMP/NAME.log, plus ARGs
# (persistence: --appendonly yes|no …); adds it to PIDS and sets SPID to
# its PID.
bench_redis() {
	local port=$1 name=$2
	shift 2
	mkdir -p "$TMP/$name"
	redis-server --port "$port" --bind 127.0.0.1 --save '' --dir "$TMP/$name" --daemonize no "$@" >"$TMP/$name.log" 2>&1 &
	SPID=$!
	PIDS+=("$SPID")
}

# bench_probly PORT NAME [ARG...]: starts "$BIN serve" (bench_build) on
# 127.0.0.1:PORT with its default AOF, no automatic snapshots (--save '')
# and no metrics HTTP listener, in TMP/NAME with its log in TMP/NAME.log,
# plus ARGs; adds it to PIDS and sets SPID to its PID. Environment
# assignments before the call (GOMAXPROCS=1 bench_probly …) reach it.
bench_probly() {
	local port=$1 name=$2
	shift 2
	mkdir -p "$TMP/$name"
	"$BIN" serve --addr "127.0.0.1:$port" --dir "$TMP/$name" --metrics-addr off --save '' "$@" >"$TMP/$name.log" 2>&1 &
	SPID=$!
	PIDS+=("$SPID")
}

# bench_three_servers PREFIX: builds probly (bench_build: or $PROBLY) and
# starts, on RPORT, APORT and PPORT, redis-server without persistence,
# redis-server with appendfsync everysec, and probly serve (bench_probly),
# in TMP (bench_tmp PREFIX), and waits until all three answer.
bench_three_servers() {
	bench_tmp "$1"
	bench_build
	bench_redis "$RPORT" redis --appendonly no
	bench_redis "$APORT" redis-aof --appendonly yes --appendfsync everysec
	bench_probly "$PPORT" probly
	wait_ping "$RPORT" "$PPORT" "$APORT"
}

# ports_free PORT...: exits 1 if a server already listens on a port (a
# benchmark must not measure somebody else's server).
ports_free() {
	local port
	for port in "$@"; do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "port $port is taken: stop that server or pick other ports" >&2
			exit 1
		fi
	done
}
