#!/bin/bash
# Issue 18 item 4 (docs/BENCHMARKS.md): SAVE and restart of a 1.1 GB BF holding 200 items.
# usage: snapmeasure.sh BIN PORT  — BF.RESERVE 1.1 GB, 200 adds, SAVE, kill -9, restart
set -u
BIN=$1; PORT=$2
DIR=$(mktemp -d /tmp/snapm.XXXX)
rss() { awk '/VmRSS/{print $2*1024}' /proc/$1/status; }
used() { redis-cli -p $PORT INFO memory | tr -d '\r' | awk -F: '/^used_memory:/{print $2}'; }
waitup() { for i in $(seq 1 600); do redis-cli -p $PORT PING 2>/dev/null | grep -q PONG && return 0; sleep 0.05; done; return 1; }
$BIN serve --dir $DIR --save '' --addr 127.0.0.1:$PORT --metrics-addr off >$DIR/log1 2>&1 &
PID=$!
waitup || { echo "no start"; cat $DIR/log1; exit 1; }
redis-cli -p $PORT BF.RESERVE bf 0.000001 300000000 >/dev/null
for i in $(seq 1 200); do echo "BF.ADD bf item$i"; done | redis-cli -p $PORT >/dev/null
echo "before SAVE: rss=$(rss $PID) used_memory=$(used)"
t0=$(date +%s.%N); redis-cli -p $PORT SAVE >/dev/null; t1=$(date +%s.%N)
echo "SAVE: $(echo "$t1 - $t0" | bc) s; rss after SAVE=$(rss $PID); dump.pdb=$(stat -c %s $DIR/dump.pdb) bytes"
kill -9 $PID; wait $PID 2>/dev/null
t0=$(date +%s.%N)
$BIN serve --dir $DIR --save '' --addr 127.0.0.1:$PORT --metrics-addr off >$DIR/log2 2>&1 &
PID=$!
waitup || { echo "no restart"; cat $DIR/log2; exit 1; }
t1=$(date +%s.%N)
echo "restart: $(echo "$t1 - $t0" | bc) s to PONG; rss=$(rss $PID) used_memory=$(used)"
sleep 5
echo "restart +5s: rss=$(rss $PID) used_memory=$(used)"
echo "exists: $(for i in 1 100 200; do echo "BF.EXISTS bf item$i"; done | redis-cli -p $PORT | tr '\n' ' ') nonmember: $(redis-cli -p $PORT BF.EXISTS bf nope)"
kill $PID; wait $PID 2>/dev/null
rm -rf $DIR
