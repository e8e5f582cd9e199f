#!/usr/bin/env bash
# Builds Berth's service image (deploy/images/berth.Dockerfile) with no registry pull:
#   berth/node:<hash>    berth/base:bookworm + the host's Node runtime, npm and headers (node.Dockerfile)
#   berth/berth:<hash>   the four services and the built console, from the repository's files
#                        (what git tracks, as they are in the work tree); also tagged berth/berth:local
# Each tag is a hash of its inputs, so an unchanged tree is a no-op. Prints `node=…` and `berth=…`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
export DOCKER_HOST="$(bash "$HERE/ensure-engine.sh")"
BASE="$(bash "$HERE/build-images.sh" --base-only | sed -n 's/^base=//p')"

exec 6>/tmp/berth-docker-build-berth.lock
flock 6

node_bin="$(command -v node)"
npm_dir="$(readlink -f "$(dirname "$(readlink -f "$(command -v npm)")")/..")"
include_dir="$(dirname "$(dirname "$(readlink -f "$node_bin")")")/include/node"
[ -f "$include_dir/node.h" ] || { echo "build-berth-image: Node headers not found at $include_dir" >&2; exit 1; }
base_id="$(docker image inspect --format '{{.Id}}' "$BASE")"
node_hash="$( { sha256sum "$HERE/node.Dockerfile" "$node_bin" | awk '{print $1}'; echo "$base_id"; cat "$npm_dir/package.json"
                cat /usr/local/share/ca-certificates/*.crt 2>/dev/null || true; } | sha256sum | cut -c1-16)"
NODE_IMAGE="berth/node:$node_hash"
if ! docker image inspect "$NODE_IMAGE" >/dev/null 2>&1; then
  ctx="$(mktemp -d /tmp/berth-node-ctx.XXXXXX)"
  trap 'rm -rf "$ctx"' EXIT
  cp "$HERE/node.Dockerfile" "$ctx/Dockerfile"
  cp "$node_bin" "$ctx/node"
  cp -a "$npm_dir" "$ctx/npm"
  cp -a "$include_dir" "$ctx/include"
  mkdir -p "$ctx/build-ca"
  cp /usr/local/share/ca-certificates/*.crt "$ctx/build-ca/" 2>/dev/null || true
  echo "build-berth-image: building $NODE_IMAGE" >&2
  docker build --network host -q --label berth.image=node -t "$NODE_IMAGE" "$ctx" >&2
  rm -rf "$ctx"; trap - EXIT
fi
echo "node=$NODE_IMAGE"

# The build context: tracked files as they are in the work tree (no node_modules, builds or state).
cd "$REPO"
files="$(mktemp /tmp/berth-context-files.XXXXXX)"
trap 'rm -f "$files"' EXIT
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done >"$files"
node_id="$(docker image inspect --format '{{.Id}}' "$NODE_IMAGE")"
hash="$( { xargs -0 sha256sum <"$files"; echo "$node_id"; } | sha256sum | cut -c1-16)"
BERTH="berth/berth:$hash"
if ! docker image inspect "$BERTH" >/dev/null 2>&1; then
  start=$(date +%s)
  echo "build-berth-image: building $BERTH" >&2
  tar --null -T "$files" -c | docker build --network host -q \
    --build-arg NODE_IMAGE="$NODE_IMAGE" --label berth.image=berth --label berth.inputs="$hash" \
    -f deploy/images/berth.Dockerfile -t "$BERTH" - >&2
  echo "build-berth-image: $BERTH built in $(( $(date +%s) - start ))s" >&2
fi
docker tag "$BERTH" berth/berth:local
echo "berth=$BERTH"
