#!/usr/bin/env bash
# Runs Redis's own, unmodified HyperLogLog test suite (tests/unit/hyperloglog.tcl,
# with Redis's test framework: ./runtest --host H --port P --singledb
# --single unit/hyperloglog) against `probly serve`.
#
#   scripts/redis-tcl-hll.sh
#
# The suite comes from Debian's redis source package (`apt-get source
# redis`), fetched with private apt lists (a deb-src line in a sources file
# of our own: the system's apt configuration is not changed) into
# data/redis-src/ (git-ignored) and reused on later runs. tclsh comes from
# Debian's tcl package (installed if missing). It builds probly, starts it
# on a free loopback port with a temporary data directory, runs the suite
# and fails unless it passed with at least one test run and no failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
src_dir="$root/data/redis-src"
work=$(mktemp -d)
cleanup() {
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

sudo=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
if ! command -v tclsh >/dev/null; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq tcl >/dev/null
fi

suite=$(ls -d "$src_dir"/redis-*/ 2>/dev/null | head -n 1 || true)
if [ -z "$suite" ] || [ ! -f "$suite/tests/unit/hyperloglog.tcl" ]; then
  . /etc/os-release
  apt_dir="$src_dir/.apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  echo "deb-src http://deb.debian.org/debian ${VERSION_CODENAME:-bookworm} main" >"$apt_dir/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -qq
  (cd "$src_dir" && apt-get "${apt_opts[@]}" source --download-only redis)
  tarball=$(ls "$src_dir"/redis_*.orig.tar.gz | head -n 1)
  tar -xzf "$tarball" -C "$src_dir"
  suite=$(ls -d "$src_dir"/redis-*/ | head -n 1)
fi
echo "redis-tcl-hll: suite from $suite"

. scripts/serve-probly.sh
serve_probly redis-tcl-hll "$work"

status=0
(cd "$suite" && ./runtest --host 127.0.0.1 --port "$port" --singledb --single unit/hyperloglog --clients 1) \
  >"$work/suite.log" 2>&1 || status=$?
cat "$work/suite.log"
ok=$(grep -c '\[.*ok.*\]:' "$work/suite.log" || true)
bad=$(grep -cE '\[.*(err|exception).*\]:' "$work/suite.log" || true)
echo "redis-tcl-hll: $ok tests passed, $bad failed (runtest exit status $status)"
if [ "$status" -ne 0 ] || [ "$bad" -ne 0 ] || [ "$ok" -eq 0 ] || ! grep -q 'All tests passed without errors' "$work/suite.log"; then
  echo "redis-tcl-hll: Redis's HyperLogLog suite did not pass against probly" >&2
  exit 1
fi
