#!/usr/bin/env bash
# Builds Berth's sandbox images without any registry pull, skipping work already done:
#   berth/base:bookworm        debootstrap --variant=minbase from the Debian mirror apt already uses
#   berth/harness:<hash>       Node 20 (copied from the host) + Claude Code, Codex and Pi CLIs
#   berth/harness:latest       the same image
# The harness tag is a hash of the Dockerfile, the pinned CLI versions, the host Node runtime and
# the base image id, so an unchanged input set is a no-op. Prints `base=…` and `harness=…`.
# Usage: build-images.sh [--base-only]
set -euo pipefail
cd "$(dirname "$0")"
HERE="$(pwd)"
export DOCKER_HOST="$(bash "$HERE/ensure-engine.sh")"

CLAUDE_CODE_VERSION=2.1.332
CODEX_VERSION=0.171.0
PI_VERSION=0.73.1
BASE=berth/base:bookworm

# Concurrent callers (test workers) wait for one build instead of racing it; the base and the
# harness have separate locks so a caller needing only the base never waits for a harness build.
exec 8>/tmp/berth-docker-build-base.lock
flock 8

debian_mirror() {
  local uri
  uri="$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)"
  [ -n "$uri" ] || uri="$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)"
  echo "${uri:-http://deb.debian.org/debian}"
}

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null 2>&1 || {
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq debootstrap >&2
  }
  mirror="$(debian_mirror)"
  rootfs="$(mktemp -d /tmp/berth-rootfs.XXXXXX)"
  trap 'rm -rf "$rootfs"' EXIT
  start=$(date +%s)
  echo "build-images: debootstrap bookworm from $mirror" >&2
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/tmp/berth-debootstrap.log 2>&1 || {
    tail -n 20 /tmp/berth-debootstrap.log >&2; exit 1; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  # The sandbox user's writable places exist in every Berth image, owned by uid 1000, so a
  # read-only-root sandbox's anonymous volumes there start out writable by it.
  mkdir -p "$rootfs/workspace" "$rootfs/home/agent"
  chown 1000:1000 "$rootfs/workspace" "$rootfs/home/agent"
  tar -C "$rootfs" -c . | docker import \
    --change 'CMD ["/bin/sh", "-c", "trap '"'"'exit 0'"'"' TERM INT; sleep infinity & wait"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$BASE" >/dev/null
  rm -rf "$rootfs"; trap - EXIT
  echo "build-images: $BASE built in $(( $(date +%s) - start ))s" >&2
fi
flock -u 8
echo "base=$BASE"
[ "${1:-}" = "--base-only" ] && exit 0
exec 7>/tmp/berth-docker-build-harness.lock
flock 7

node_bin="$(command -v node)"
npm_dir="$(dirname "$(readlink -f "$(command -v npm)")")/.."
npm_dir="$(readlink -f "$npm_dir")"
base_id="$(docker image inspect --format '{{.Id}}' "$BASE")"
hash="$( { sha256sum harness.Dockerfile "$node_bin" | awk '{print $1}'
           echo "$CLAUDE_CODE_VERSION $CODEX_VERSION $PI_VERSION $base_id"
           cat "$npm_dir/package.json"
           cat /usr/local/share/ca-certificates/*.crt 2>/dev/null || true; } | sha256sum | cut -c1-16)"
HARNESS="berth/harness:$hash"

if ! docker image inspect "$HARNESS" >/dev/null 2>&1; then
  ctx="$(mktemp -d /tmp/berth-harness-ctx.XXXXXX)"
  trap 'rm -rf "$ctx"' EXIT
  cp harness.Dockerfile "$ctx/Dockerfile"
  cp "$node_bin" "$ctx/node"
  cp -a "$npm_dir" "$ctx/npm"
  mkdir -p "$ctx/build-ca"
  cp /usr/local/share/ca-certificates/*.crt "$ctx/build-ca/" 2>/dev/null || true
  start=$(date +%s)
  echo "build-images: building $HARNESS" >&2
  docker build --network host -q \
    --build-arg CLAUDE_CODE_VERSION="$CLAUDE_CODE_VERSION" \
    --build-arg CODEX_VERSION="$CODEX_VERSION" \
    --build-arg PI_VERSION="$PI_VERSION" \
    --label berth.image=harness --label berth.inputs="$hash" \
    -t "$HARNESS" "$ctx" >&2
  echo "build-images: $HARNESS built in $(( $(date +%s) - start ))s" >&2
fi
docker tag "$HARNESS" berth/harness:latest
echo "harness=$HARNESS"
