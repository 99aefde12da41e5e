#!/usr/bin/env bash
# Runs the benchmarks that hold cairn's performance targets, on generated
# vaults of 1k, 10k and 100k pages, and writes the results to bench/.
# Slow: the 100k-page vaults take a while to generate and import.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench
run() { # package, pattern, benchtime
  echo "== $1 $2 ($3)" >&2
  go test "$1" -run '^$' -bench "$2" -benchtime "$3" -timeout 3h | tee -a bench/latest.txt
}
: > bench/latest.txt
{ uname -a; go version; nproc; grep -m1 'model name' /proc/cpuinfo || true; } | tee -a bench/latest.txt
run ./store 'CommitOnePage|ReadPinned|Diff10' 100x
run ./store 'Import' 3x
run ./index 'Build' 1x
run ./index 'Update10' 100x
run ./index 'Preview4000' 3x
run ./index 'Search|Links' 500x
run ./index 'BenchmarkWhere' 50x
run ./index 'FTSText' 1s
run ./markdown 'Parse' 1s
run ./merge 'Text10MB' 5x
# The benchmarks that work on folders of many files wait first for the
# disk to settle after the previous one deleted its folders: on an ext4
# without a journal, creating a file skips, one by one, the inodes freed in
# the last 30 seconds, and after mass deletions creating and even statting
# files costs up to several times as much (see BENCHMARKS.md, "The
# machine"). CAIRN_BENCH_TMPDIR puts their folders on another file system.
cooldown() { echo "== waiting ${CAIRN_BENCH_COOLDOWN:-120}s for the disk to settle" >&2; sleep "${CAIRN_BENCH_COOLDOWN:-120}"; }
folders() { TMPDIR="${CAIRN_BENCH_TMPDIR:-${TMPDIR:-/tmp}}" run "$@"; }
folders ./worktree 'Materialize' 5x
cooldown
folders ./cmd/cairn 'BenchmarkStatus$' 20x
cooldown
folders ./cmd/cairn 'CommitPath' 15x
cooldown
folders ./cmd/cairn 'Import' 3x
cooldown
folders ./cmd/cairn 'Adopt' 2x
run ./cmd/cairn 'BenchmarkRead$' 50x
run ./cmd/cairn 'ServeRead' 3000x
run ./cmd/cairn 'ServeLoad' 1x
run ./cmd/cairn 'MCPRead' 3000x
run ./cmd/cairn 'MCPLoad' 1x
# Beside Eva's MCP server, when scripts/eva-mcp.sh installed it.
if [ -n "${CAIRN_EVA_MCP:-}" ]; then
  CAIRN_BENCH_PAGES=1000 run ./cmd/cairn 'MCPEva' 200x
  CAIRN_BENCH_PAGES=10000 run ./cmd/cairn 'MCPEva' 3x
fi
run ./admit 'Admit' 40x
run ./admit 'BenchmarkPolicies' 200x
run ./convert 'PDF' 50x
cooldown
run ./ingest 'Ingest' 10x
run ./agent/extractive 'Extract' 20x
run ./agent/cli 'Overhead' 20x
CAIRN_BENCH_PAGES=10000 run ./agent/cli 'Overhead' 5x
run ./agent/builtin 'LoopStep' 5x
run ./cmd/cairn 'WebUI$' 300x
run ./cmd/cairn 'WebUIBrowser' 5x
