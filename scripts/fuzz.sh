#!/usr/bin/env bash
# Runs every fuzz test of the module for the given time each (default 60s).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-60s}
for pkg in $(go list ./...); do
  for name in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $name ($fuzztime)"
    go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime"
  done
done
