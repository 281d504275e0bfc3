#!/usr/bin/env bash
# Fetches 4.5M real npm package names (all-the-package-names@2.0.2578, MIT)
# with `npm pack` and writes them one per line to data/names.txt.
# The data folder is git-ignored: never commit it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-data}
version=2.0.2578
mkdir -p "$out"
if [ -s "$out/names.txt" ]; then
  echo "$out/names.txt already present ($(wc -l <"$out/names.txt") names)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "all-the-package-names@$version" >/dev/null)
tar -xzf "$tmp"/all-the-package-names-"$version".tgz -C "$tmp"
# names.json is one JSON array of strings; npm names cannot contain quotes,
# commas or whitespace, so a line-oriented extraction is exact.
node -e '
const names = require(process.argv[1]);
const out = require("fs").createWriteStream(process.argv[2]);
out.write(names.join("\n") + "\n");
out.end();
' "$tmp/package/names.json" "$out/names.txt"
echo "wrote $(wc -l <"$out/names.txt") names to $out/names.txt"
