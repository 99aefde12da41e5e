#!/usr/bin/env bash
# Installs Eva's MCP server (packages/eva-mcp of the Eva-brain repository)
# for the side-by-side MCP benchmark, outside this repository, and prints
# the path of its server.mjs. Nothing of Eva's is committed here.
#
#   scripts/eva-mcp.sh EVA_CHECKOUT [DEST]
#
# EVA_CHECKOUT is a clone of the Eva-brain repository (a work tree or a bare
# git directory); DEST defaults to $TMPDIR/eva-mcp. Then:
#
#   CAIRN_EVA_MCP=$(scripts/eva-mcp.sh ~/src/Eva-brain) \
#     go test ./cmd/cairn -run '^$' -bench MCPEva -benchtime 200x
set -euo pipefail
src=${1:?usage: scripts/eva-mcp.sh EVA_CHECKOUT [DEST]}
dest=${2:-${TMPDIR:-/tmp}/eva-mcp}
rm -rf "$dest" && mkdir -p "$dest"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$src" archive HEAD packages/eva-mcp packages/wiki-lib | tar -x -C "$dest"
else
  cp -r "$src/packages" "$dest/"
fi
cd "$dest/packages/wiki-lib"
npm install --silent --no-audit --no-fund >&2
npx tsc -p tsconfig.json >&2
cd "$dest/packages/eva-mcp"
npm pkg delete dependencies.wiki-lib >&2 # a workspace package: linked below
npm install --silent --no-audit --no-fund --omit=dev @modelcontextprotocol/sdk@1 zod@3 >&2
rm -rf node_modules/wiki-lib && ln -s ../../wiki-lib node_modules/wiki-lib
echo "$dest/packages/eva-mcp/server.mjs"
