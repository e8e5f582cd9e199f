#!/usr/bin/env bash
# Installs the pinned harness CLIs (Claude Code, Codex, Pi) into a cache prefix outside git and
# prints the bin dir on stdout. Idempotent: skips npm when the pinned versions are already there.
# Usage: scripts/harness/install-clis.sh [prefix]   (default $BERTH_CLI_PREFIX or /var/cache/berth/clis)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
. "$here/versions.env"

prefix="${1:-${BERTH_CLI_PREFIX:-/var/cache/berth/clis}}"
bin="$prefix/node_modules/.bin"

installed_version() {
  local pkg_json="$prefix/node_modules/$1/package.json"
  [ -f "$pkg_json" ] && node -p "require('$pkg_json').version" 2>/dev/null || true
}

up_to_date() {
  [ "$(installed_version @anthropic-ai/claude-code)" = "$CLAUDE_CODE_VERSION" ] &&
    [ "$(installed_version @openai/codex)" = "$CODEX_VERSION" ] &&
    [ "$(installed_version @mariozechner/pi-coding-agent)" = "$PI_CODING_AGENT_VERSION" ] &&
    [ -x "$bin/claude" ] && [ -x "$bin/codex" ] && [ -x "$bin/pi" ]
}

if ! up_to_date; then
  mkdir -p "$prefix"
  # A private package.json keeps this prefix from walking up into some other project.
  [ -f "$prefix/package.json" ] || echo '{"name":"berth-harness-clis","private":true}' >"$prefix/package.json"
  echo "installing harness CLIs into $prefix" >&2
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
    "@openai/codex@$CODEX_VERSION" \
    "@mariozechner/pi-coding-agent@$PI_CODING_AGENT_VERSION" >&2
  up_to_date || { echo "harness CLIs did not install at the pinned versions" >&2; exit 1; }
fi

echo "$bin"
