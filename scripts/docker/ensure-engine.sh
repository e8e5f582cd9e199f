#!/usr/bin/env bash
# Ensures a Docker engine answers on Berth's own socket and prints the DOCKER_HOST to use.
# Idempotent: an engine already answering is reused. Only ever touches our socket, never the
# system's /var/run/docker.sock. Needs root to install docker.io and run dockerd.
#   ensure-engine.sh              prints the DOCKER_HOST value
#   ensure-engine.sh --print-env  prints `export DOCKER_HOST=…` and `export BERTH_ENGINE_STARTED=0|1`
#                                 (1 when this call started dockerd), for `source <(…)`
set -euo pipefail
PRINT_ENV=0
[ "${1:-}" = "--print-env" ] && PRINT_ENV=1
report() {
  if [ "$PRINT_ENV" = 1 ]; then
    printf 'export DOCKER_HOST=%q\nexport BERTH_ENGINE_STARTED=%s\n' "$SOCK_URL" "$1"
  else
    echo "$SOCK_URL"
  fi
}

SOCK_URL="${DOCKER_HOST:-unix:///run/berth-docker.sock}"
case "$SOCK_URL" in
  unix://*) SOCK="${SOCK_URL#unix://}" ;;
  *) echo "ensure-engine: only unix:// DOCKER_HOST values are managed here (got $SOCK_URL)" >&2; exit 2 ;;
esac
if [ "$SOCK" = /var/run/docker.sock ] || [ "$SOCK" = /run/docker.sock ]; then
  echo "ensure-engine: refusing to manage the system docker socket $SOCK" >&2; exit 2
fi
DATA_ROOT="${BERTH_DOCKER_DATA_ROOT:-/var/lib/berth-docker}"
PIDFILE="${BERTH_DOCKER_PIDFILE:-/run/berth-docker.pid}"
LOG="${BERTH_DOCKER_LOG:-/var/log/berth-docker.log}"
WAIT_SECONDS="${BERTH_DOCKER_WAIT_SECONDS:-60}"

answers() { DOCKER_HOST="$SOCK_URL" docker info --format '{{.ServerVersion}}' >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && answers; then
  report 0; exit 0
fi

# Serialise concurrent callers (parallel test workers) so only one installs and starts dockerd.
exec 9>/tmp/berth-docker-engine.lock
flock 9
if command -v docker >/dev/null 2>&1 && answers; then
  report 0; exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  echo "ensure-engine: installing docker.io" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq docker.io >&2
fi

# A stale pidfile from a crashed engine would make dockerd refuse to start.
if [ -f "$PIDFILE" ] && ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then rm -f "$PIDFILE"; fi
STARTED=0
if [ ! -f "$PIDFILE" ]; then
  STARTED=1
  mkdir -p "$DATA_ROOT" "$(dirname "$LOG")"
  rm -f "$SOCK"
  # --bridge=none/--iptables=false: sandboxes use network `none` or `host`, nothing is NATed.
  # 9>&-: the daemon must not inherit (and hold forever) the start-up lock.
  setsid dockerd --bridge=none --iptables=false --ip6tables=false \
    --data-root "$DATA_ROOT" --exec-root "${DATA_ROOT}-exec" \
    --host "$SOCK_URL" --pidfile "$PIDFILE" >>"$LOG" 2>&1 </dev/null 9>&- &
fi

deadline=$(( $(date +%s) + WAIT_SECONDS ))
until answers; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "ensure-engine: dockerd did not answer on $SOCK_URL within ${WAIT_SECONDS}s; last log lines:" >&2
    tail -n 20 "$LOG" >&2 || true
    exit 1
  fi
  sleep 0.2
done
report "$STARTED"
