#!/usr/bin/env bash
# Runs every in-process comparison of bench/family_test.go in one go, in a
# fixed order, and writes raw outputs and benchstat tables to
# bench/results/library-<date>/:
#
#   cuckoo     insert/lookup vs seiflotfy and panmari (+ overfill, FPR)
#   hll        dense insert and count vs axiomhq
#   family-1m  Add/Test/TestMany of every Bloom layout at 1M keys
#   family-100m the same at 100M keys (out of cache; BENCH_SKIP_100M=1 skips)
#   cms        count-min increment/query vs BoomFilters (+ accuracy check)
#
# BENCH_PARTS (default "checks cuckoo hll family-1m family-100m") picks
# the parts to run; BENCH_OUT overrides the output folder.
#
# Each benchmark interleaves the implementations BENCH_ROUNDS times (default
# 5) in one process. Run from the repository root on a machine that is
# otherwise idle; it takes 20 to 40 minutes with the 100M part.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BENCH_OUT:-results/library-$(date -u +%Y-%m-%d)}
parts=" ${BENCH_PARTS:-checks cuckoo hll family-1m family-100m cms} "
want() { [[ $parts == *" $1 "* ]]; }
mkdir -p "$out"
rounds=${BENCH_ROUNDS:-5}
strip() { sed -E 's/#[0-9]+//' "$1"; }
stat() { strip "$1" >"$1.stripped" && benchstat -col /impl "$1.stripped" >"$1.benchstat" 2>&1 || true; }

if want checks; then
  echo "== correctness of the harness (overfill, FPR)" >&2
  go test -count=1 -run 'CuckooOverfill|CuckooFPR|FamilyFPR' -v . | tee "$out/checks.txt" >&2
fi

if want cuckoo; then
  echo "== cuckoo" >&2
  BENCH_ROUNDS=$rounds go test -run '^$' -bench 'Cuckoo' -benchtime 943718x -timeout 60m . | tee "$out/cuckoo.txt" >&2
  stat "$out/cuckoo.txt"
fi

if want hll; then
  echo "== hll" >&2
  BENCH_ROUNDS=$rounds go test -run '^$' -bench 'HLLInsert' -benchtime 5000000x -timeout 60m . | tee "$out/hll.txt" >&2
  BENCH_ROUNDS=$rounds go test -run '^$' -bench 'HLLCount' -benchtime 2000x -timeout 60m . | tee -a "$out/hll.txt" >&2
  stat "$out/hll.txt"
fi

if want family-1m; then
  echo "== Bloom family, 1M keys" >&2
  BENCH_ROUNDS=$rounds go test -run '^$' -bench 'Family' -benchtime 1000000x -timeout 60m . | tee "$out/family-1m.txt" >&2
  stat "$out/family-1m.txt"
fi

if want family-100m && [ -z "${BENCH_SKIP_100M:-}" ]; then
  echo "== Bloom family, 100M keys (Add: the first 20M keys into a filter sized for 100M)" >&2
  BENCH_FAMILY_N=100000000 BENCH_KEYS=33554432 BENCH_ROUNDS=${BENCH_ROUNDS_100M:-3} \
    go test -run '^$' -bench 'Family' -benchtime 20000000x -timeout 120m . | tee "$out/family-100m.txt" >&2
  stat "$out/family-100m.txt"
fi
if want cms; then
  echo "== count-min sketch" >&2
  go test -count=1 -run 'CMSAccuracy' -v . | tee "$out/cms-accuracy.txt" >&2
  BENCH_ROUNDS=$rounds go test -run '^$' -bench 'CMS' -benchtime 2000000x -timeout 60m . | tee "$out/cms.txt" >&2
  stat "$out/cms.txt"
fi
echo "results in bench/$out" >&2
