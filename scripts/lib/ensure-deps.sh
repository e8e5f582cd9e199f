#!/usr/bin/env bash
# Installs what Berth needs on a fresh Debian machine (root, Node 20): idempotent, quiet when done.
# Usage: ensure-deps.sh [node] [apt:<pkg>...]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"

ensure_node_modules() {
  local stamp="$repo/node_modules/.berth-lock-hash"
  local want
  want="$(sha256sum "$repo/package-lock.json" | cut -c1-64)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  echo "berth: installing npm dependencies (npm ci)…" >&2
  (cd "$repo" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
}

ensure_apt() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "berth: installing Debian packages: ${missing[*]}…" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

apt_pkgs=()
for arg in "$@"; do
  case "$arg" in
    node) ensure_node_modules ;;
    apt:*) apt_pkgs+=("${arg#apt:}") ;;
    *) echo "ensure-deps: unknown argument $arg" >&2; exit 2 ;;
  esac
done
[ ${#apt_pkgs[@]} -eq 0 ] || ensure_apt "${apt_pkgs[@]}"
