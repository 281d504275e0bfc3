#!/usr/bin/env bash
# Memory benchmark (issue 18): RSS against used_memory for probly, and
# RSS growth against redis-server's for the equivalent data.
#
#   bench/scripts/memory.sh [SECONDS] > memory.csv     (summary on stderr)
#
# Both servers run at the same time (AOF appendfsync everysec, no
# snapshots and no automatic AOF rewrite: a rewrite while writes go on
# copies each value written meanwhile, in probly by copy-on-write of the
# value, in Redis by the fork's copy-on-write of its pages; that peak is
# measured by the load test of docs/BENCHMARKS.md "Server under load").
# Data:
#   probly  BF.RESERVE bf 0.01 10000000 + 2M items (BF.MADD), CF.RESERVE cf
#           10000000 + 2M items (CF.INSERT), 2,000 HyperLogLogs hll:%012d of
#           1,000 items each
#   redis   the same HyperLogLogs, and strings bf and cf of the byte sizes
#           probly's MEMORY USAGE gives for its filters (RedisBloom is not
#           loaded): the equivalent string data
# Then the 200-client load: four redis-benchmark processes of 50 clients
# each, for SECONDS (default 30) on each server in turn:
#   probly  BF.ADD bf, BF.EXISTS bf, CF.ADD cf (random items in 100M, so CF.ADD
#           adds few duplicates and the filter keeps its size), PFADD
#           hll:<random of 2000> <random>
#   redis   SETRANGE bf, GETRANGE bf, SETRANGE cf, PFADD hll:<random> <random>
# Every 250 ms the script samples each server's RSS (/proc/PID/status) and
# INFO used_memory. CSV: server,phase,t_s,rss_bytes,used_memory,rss_anon_bytes.
# rss_anon_bytes is RssAnon (/proc/PID/status): RSS without the file-backed
# pages, of which probly's are mostly its own binary's (about 15 MiB of a
# 38 MB executable, touched by package initialisation: clean pages the
# kernel can drop and read again; redis-server's binary is about 2 MB).
# PROBLY=/path/to/probly measures another binary instead of building.
# SCALE=k (default 1) multiplies both filters' capacity and items by k
# (the HyperLogLogs stay 2,000): the fixed part of the process's memory
# (binary, runtime, connections) does not grow with the data, so RSS ÷
# used_memory falls as the data grows.
set -euo pipefail
SECS=${1:-30}
SCALE=${SCALE:-1}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/scripts/lib.sh"
ports_free 17491 17492
bench_tmp probly-membench

bench_build
bench_redis 17491 redis --appendonly yes --appendfsync everysec --auto-aof-rewrite-percentage 0
RPID=$SPID
bench_probly 17492 probly --auto-aof-rewrite-percentage 0
PPID2=$SPID
wait_ping 17491 17492

rss() { awk '/^VmRSS:/ {print $2 * 1024}' "/proc/$1/status"; }
anon() { awk '/^RssAnon:/ {print $2 * 1024}' "/proc/$1/status"; }
used() { redis-cli -p "$1" INFO memory | tr -d '\r' | awk -F: '$1 == "used_memory" {print $2}'; }
sample() { # sample NAME PID PORT PHASE T
	echo "$1,$4,$5,$(rss "$2"),$(used "$3"),$(anon "$2")" | tee -a "$TMP/mem.csv"
}

echo "server,phase,t_s,rss_bytes,used_memory,rss_anon_bytes" | tee "$TMP/mem.csv"
sample redis "$RPID" 17491 empty 0
sample probly "$PPID2" 17492 empty 0

# RESP for redis-cli --pipe.
python3 - "$TMP" "$SCALE" <<'PY'
import sys
tmp, scale = sys.argv[1], int(sys.argv[2])
def cmd(f, *a):
    f.write(f"*{len(a)}\r\n")
    for x in a:
        x = str(x)
        f.write(f"${len(x.encode())}\r\n{x}\r\n")
with open(f"{tmp}/probly.resp", "w") as f:
    cmd(f, "BF.RESERVE", "bf", "0.01", 10_000_000 * scale)
    cmd(f, "CF.RESERVE", "cf", 10_000_000 * scale)
    for b in range(0, 2_000_000 * scale, 1000):
        cmd(f, "BF.MADD", "bf", *[f"item:{i}" for i in range(b, b + 1000)])
        cmd(f, "CF.INSERT", "cf", "NOCREATE", "ITEMS", *[f"item:{i}" for i in range(b, b + 1000)])
with open(f"{tmp}/hll.resp", "w") as f:
    for h in range(2000):
        cmd(f, "PFADD", f"hll:{h:012d}", *[f"e:{h}:{i}" for i in range(1000)])
PY
redis-cli -p 17492 --pipe <"$TMP/probly.resp" >/dev/null
for port in 17491 17492; do redis-cli -p "$port" --pipe <"$TMP/hll.resp" >/dev/null; done
BFB=$(redis-cli -p 17492 MEMORY USAGE bf)
CFB=$(redis-cli -p 17492 MEMORY USAGE cf)
redis-cli -p 17491 SETRANGE bf $((BFB - 1)) x >/dev/null
redis-cli -p 17491 SETRANGE cf $((CFB - 1)) x >/dev/null
echo "SCALE $SCALE: probly MEMORY USAGE bf $BFB cf $CFB" >&2
sample redis "$RPID" 17491 loaded 0
sample probly "$PPID2" 17492 loaded 0
# 5 s idle between loading and the load test (the loading's transient
# buffers are collected and returned meanwhile), sampled.
for i in $(seq 20); do
	sample redis "$RPID" 17491 settle "$(echo "$i * 0.25" | bc)"
	sample probly "$PPID2" 17492 settle "$(echo "$i * 0.25" | bc)"
	sleep 0.25
done

# load NAME PID PORT "R CMD"...: one redis-benchmark process of 50 clients
# per command (random ints below R) for SECS seconds, sampled every 250 ms.
load() {
	local name=$1 pid=$2 port=$3 bp=() c t0 i=0
	shift 3
	for c in "$@"; do
		# shellcheck disable=SC2086
		timeout "$SECS" redis-benchmark -p "$port" -c 50 -n 100000000 -r ${c%% *} -q ${c#* } >/dev/null 2>&1 &
		bp+=($!)
	done
	t0=$(date +%s.%N)
	while kill -0 "${bp[0]}" 2>/dev/null; do
		sample "$name" "$pid" "$port" load "$(echo "$(date +%s.%N) - $t0" | bc)"
		sleep 0.25
	done
	wait "${bp[@]}" 2>/dev/null || true
	sample "$name" "$pid" "$port" after 0
}
# (Redis refuses __rand_int__'s leading zeros as an offset: the strings
# are written and read at a fixed offset.)
load probly "$PPID2" 17492 "100000000 BF.ADD bf __rand_int__" "100000000 BF.EXISTS bf __rand_int__" \
	"100000000 CF.ADD cf __rand_int__" "2000 PFADD hll:__rand_int__ __rand_int__"
load redis "$RPID" 17491 "2000 SETRANGE bf 4096 x" "2000 GETRANGE bf 4096 4196" \
	"2000 SETRANGE cf 4096 x" "2000 PFADD hll:__rand_int__ __rand_int__"

# Summary on stderr: per server, RSS and used_memory empty, loaded and
# during the load; RSS ÷ used_memory (max over the samples under load);
# RSS growth (peak under load − empty) and probly's ÷ redis's.
python3 - "$TMP/mem.csv" >&2 <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
M = 1 << 20
g = {}
for s in ('probly', 'redis'):
    r = [x for x in rows if x['server'] == s]
    e = next(x for x in r if x['phase'] == 'empty')
    l = next(x for x in r if x['phase'] == 'loaded')
    se = [x for x in r if x['phase'] == 'settle'][-1]
    under = [x for x in r if x['phase'] in ('load', 'after')]
    ratio = [int(x['rss_bytes']) / int(x['used_memory']) for x in under]
    peak = max(int(x['rss_bytes']) for x in under)
    g[s] = peak - int(e['rss_bytes'])
    print(f"{s}: empty RSS {int(e['rss_bytes'])/M:.1f} MiB used {int(e['used_memory'])/M:.1f} MiB; "
          f"loaded RSS {int(l['rss_bytes'])/M:.1f} MiB used {int(l['used_memory'])/M:.1f} MiB "
          f"(RSS/used {int(l['rss_bytes'])/int(l['used_memory']):.2f}); 5 s later RSS {int(se['rss_bytes'])/M:.1f} MiB "
          f"(RSS/used {int(se['rss_bytes'])/int(se['used_memory']):.2f}); under load RSS/used max {max(ratio):.2f} "
          f"min {min(ratio):.2f} over {len(ratio)} samples; RSS peak {peak/M:.1f} MiB; growth {g[s]/M:.1f} MiB; "
          f"(RSS peak - empty RSS) / used {g[s]/int(l['used_memory']):.2f}")
    anon = [int(x['rss_anon_bytes']) / int(x['used_memory']) for x in under]
    print(f"{s}: anonymous RSS empty {int(e['rss_anon_bytes'])/M:.1f} MiB; under load RssAnon/used max {max(anon):.2f} "
          f"min {min(anon):.2f}")
print(f"RSS growth probly / redis: {g['probly']/g['redis']:.2f}")
PY
