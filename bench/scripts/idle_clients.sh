#!/usr/bin/env bash
# Per-connection memory (issue 18): RSS of probly and redis-server with
# CLIENTS idle connections, after each connection ran one batch of 16
# pipelined commands (so buffers and stacks have been used).
#
#   bench/scripts/idle_clients.sh [CLIENTS] > idle.csv     (summary on stderr)
#
# Per server: RSS (/proc/PID/status VmRSS) with no client, then with
# CLIENTS connections open, each having sent 16 pipelined SET/GET/PING
# and read the replies, sampled 3 s after the last one went idle (the
# collector has run: probly's memory tuner collects within 100 ms once
# over its limit, and the reaper returns freed buffers), then 3 s after
# they closed. CSV: server,phase,clients,rss_bytes.
# PROBLY=/path/to/probly measures another binary instead of building.
set -euo pipefail
CLIENTS=${1:-200}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/bench/scripts/lib.sh"
ports_free 17591 17592
bench_tmp probly-idlebench

bench_build
bench_redis 17591 redis --appendonly yes --appendfsync everysec --maxclients 10000
RPID=$SPID
bench_probly 17592 probly
PPID2=$SPID
wait_ping 17591 17592

echo "server,phase,clients,rss_bytes"
python3 - "$CLIENTS" "$RPID" "$PPID2" <<'PY'
import socket, sys, time
n, rpid, ppid = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
def cmd(*a):
    return f"*{len(a)}\r\n".encode() + b"".join(f"${len(x)}\r\n{x}\r\n".encode() for x in a)
res = {}
for name, pid, port in (("redis", rpid, 17591), ("probly", ppid, 17592)):
    time.sleep(3)
    empty = rss(pid)
    print(f"{name},empty,0,{empty}", flush=True)
    socks = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        req = b"".join(cmd("SET", f"k:{i}:{j}", "x" * 16) + cmd("GET", f"k:{i}:{j}") for j in range(5)) + cmd("PING") * 6
        s.sendall(req)
        want, got = 21, b""  # +OK, $16 and its payload, +PONG: one CRLF each
        while got.count(b"\r\n") < want:
            got += s.recv(65536)
        socks.append(s)
    time.sleep(3)
    idle = rss(pid)
    print(f"{name},idle,{n},{idle}", flush=True)
    for s in socks:
        s.close()
    time.sleep(3)
    closed = rss(pid)
    print(f"{name},closed,0,{closed}", flush=True)
    res[name] = (empty, idle, closed)
for name, (e, i, c) in res.items():
    print(f"{name}: RSS empty {e/2**20:.1f} MiB, {n} idle clients {i/2**20:.1f} MiB "
          f"(+{(i-e)/2**20:.2f} MiB, {(i-e)/n/1024:.1f} KiB per client), after close {c/2**20:.1f} MiB", file=sys.stderr)
PY
