#!/usr/bin/env bash
# Installs the five agent CLIs the end-to-end tests drive (test/agents-e2e.test.ts), pinned exactly, into a
# cache outside the project's node_modules (they are large and no shipped code uses them):
#   ${JACKIN_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/jackin-bridge/agents}
# Idempotent: a cache that already holds these exact versions is left as it is. Prints the cache directory.
# The versions are the ones measured in docs/guide.md ("Agents in containers").
set -euo pipefail

dir=${JACKIN_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/jackin-bridge/agents}
want='{
  "private": true,
  "description": "agent CLIs for jackin bridge tests (scripts/install-agents.sh)",
  "dependencies": {
    "@anthropic-ai/claude-code": "2.1.332",
    "@openai/codex": "0.171.0",
    "@google/gemini-cli": "0.61.0",
    "opencode-ai": "1.18.33",
    "@github/copilot": "1.0.102"
  }
}'
installed() {
  node -e '
    const dir = process.argv[1];
    const want = JSON.parse(process.argv[2]).dependencies;
    for (const [name, version] of Object.entries(want)) {
      const p = require(require("path").join(dir, "node_modules", name, "package.json"));
      if (p.version !== version) process.exit(1);
    }' "$dir" "$want" 2>/dev/null &&
    [ -x "$dir/node_modules/.bin/claude" ] && [ -x "$dir/node_modules/.bin/codex" ] && [ -x "$dir/node_modules/.bin/gemini" ] &&
    [ -x "$dir/node_modules/opencode-linux-x64/bin/opencode" ] && [ -x "$dir/node_modules/.bin/copilot" ]
}
if ! installed; then
  mkdir -p "$dir"
  printf '%s\n' "$want" > "$dir/package.json"
  # --save-exact is the pin; scripts stay on (Claude Code's postinstall puts its native binary in place).
  npm install --prefix "$dir" --save-exact --no-audit --no-fund --loglevel=error >&2
  installed || { echo "install-agents: $dir does not hold the pinned versions after npm install" >&2; exit 1; }
fi
echo "$dir"
