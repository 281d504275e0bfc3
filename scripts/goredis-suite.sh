#!/usr/bin/env bash
# Runs go-redis v9.22.0's own probabilistic test suite (ginkgo labels
# bloom/cuckoo) against a probly server (spec/redis-compat.md §5).
#
#   scripts/goredis-suite.sh [label-filter] [doctest-regexp]
#
# The default label filter is bloom. With a doctest regexp (for example
# 'ExampleClient_cms$') it then also runs the matching examples of
# go-redis's doctests/ against the same server (their hard-coded
# localhost:6379 rewritten to the server's address); each must pass.
#
# It builds probly, starts `probly serve` on a free loopback port with a
# temporary data directory, copies the read-only go-redis module to a
# temporary folder, runs the suite in RESP2 and RESP3 contexts, and stops
# the server. Exit status is the suite's.
set -euo pipefail
cd "$(dirname "$0")/.."
labels=${1:-bloom}
version=v9.22.0
work=$(mktemp -d)
cleanup() {
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

. scripts/serve-probly.sh
serve_probly goredis-suite "$work"

src=$(go mod download -json "github.com/redis/go-redis/v9@$version" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
cp -r "$src" "$work/go-redis"
chmod -R u+w "$work/go-redis"
echo "{\"db\":{\"endpoints\":[\"redis://127.0.0.1:$port\"]}}" >"$work/cfg.json"
cd "$work/go-redis"
status=0
RE_CLUSTER=true REDIS_ENDPOINTS_CONFIG_PATH="$work/cfg.json" REDIS_VERSION=8.4 \
  go test -count=1 -v -run TestGinkgoSuite . -ginkgo.label-filter="$labels" -ginkgo.no-color -ginkgo.succinct \
  >"$work/suite.log" 2>&1 || status=$?
cat "$work/suite.log"
# A label filter that matches nothing passes with 0 specs: refuse that.
# (ginkgo's succinct header: "[seed] go-redis - 44/1543 specs ...")
ran=$(sed -n 's/.* - \([0-9][0-9]*\)\/[0-9][0-9]* specs.*/\1/p' "$work/suite.log" | head -n 1)
if [ $status -eq 0 ] && [ "${ran:-0}" -eq 0 ]; then
  echo "goredis-suite: no spec ran for label filter '$labels'" >&2
  status=1
fi
echo "goredis-suite: ${ran:-0} specs ran for '$labels'"
doctests=${2:-}
if [ $status -eq 0 ] && [ -n "$doctests" ]; then
  sed -i "s/localhost:6379/127.0.0.1:$port/g" doctests/*.go
  dstatus=0
  go test -count=1 -v -run "$doctests" ./doctests/ >"$work/doctests.log" 2>&1 || dstatus=$?
  cat "$work/doctests.log"
  passed=$(grep -c '^--- PASS' "$work/doctests.log" || true)
  if [ $dstatus -eq 0 ] && [ "${passed:-0}" -eq 0 ]; then
    echo "goredis-suite: no doctest ran for '$doctests'" >&2
    dstatus=1
  fi
  echo "goredis-suite: ${passed:-0} doctests passed for '$doctests'"
  status=$dstatus
fi
if [ $status -ne 0 ]; then
  echo "--- server log (tail) ---"
  tail -n 50 "$work/server.log"
fi
exit $status
