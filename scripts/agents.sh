#!/usr/bin/env bash
# Installs the agent CLIs cairn drives — Claude Code, Codex and OpenCode —
# at pinned versions into a cache folder, once, and prints the environment
# the real-agent tests read:
#
#   eval "$(scripts/agents.sh)"
#
# Without npm it prints nothing and those tests are skipped, unless $CI is
# set: then it fails. Idempotent.
set -euo pipefail
claude_version=2.1.332
codex_version=0.171.0
opencode_version=1.18.33
dir=${CAIRN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn}/agents-$claude_version-$codex_version-$opencode_version
bin=$dir/node_modules/.bin
if [ ! -x "$bin/claude" ] || [ ! -x "$bin/codex" ] || [ ! -x "$bin/opencode" ]; then
  if ! command -v npm >/dev/null; then
    if [ -n "${CI:-}" ]; then echo "agents.sh: npm is needed to install the agent CLIs" >&2; exit 1; fi
    echo "agents.sh: no npm: the real-agent tests will be skipped" >&2
    exit 0
  fi
  mkdir -p "$dir"
  echo "agents.sh: installing @anthropic-ai/claude-code@$claude_version @openai/codex@$codex_version opencode-ai@$opencode_version into $dir" >&2
  if ! (cd "$dir" && npm install --silent --no-audit --no-fund --no-save --engine-strict=false \
      "@anthropic-ai/claude-code@$claude_version" "@openai/codex@$codex_version" "opencode-ai@$opencode_version" >&2); then
    if [ -n "${CI:-}" ]; then exit 1; fi
    echo "agents.sh: the install failed: the real-agent tests will be skipped" >&2
    exit 0
  fi
fi
echo "export CAIRN_AGENTS='$bin'"
