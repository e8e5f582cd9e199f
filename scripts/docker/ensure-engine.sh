#!/usr/bin/env bash
# Ensures a Docker engine answers and prints how to reach it. Which engine, in order:
#   1. DOCKER_HOST, when it is set and answers (any unix:// socket, the system's included, or tcp://);
#   2. with --use-system: the system engine on /var/run/docker.sock, when it answers;
#   3. Berth's own engine on DOCKER_HOST's unix socket, or unix:///run/berth-docker.sock when
#      DOCKER_HOST is unset: reused when it answers, else started here (installing docker.io).
# An engine this script did not start is never stopped or restarted by Berth, and it never starts
# a dockerd on the system socket. Needs root only to install docker.io and start dockerd.
#   ensure-engine.sh [--use-system]              prints the DOCKER_HOST value
#   ensure-engine.sh [--use-system] --print-env  prints, for `source <(…)`:
#       export DOCKER_HOST=…
#       export BERTH_ENGINE_STARTED=0|1    (1 when this call started dockerd)
#       export BERTH_ENGINE_SOURCE=docker-host|system|berth|started
# Berth's own engine takes BERTH_DOCKER_DATA_ROOT, BERTH_DOCKER_EXEC_ROOT, BERTH_DOCKER_PIDFILE,
# BERTH_DOCKER_LOG and BERTH_DOCKER_WAIT_SECONDS (so a test can run a private one).
set -euo pipefail
PRINT_ENV=0
USE_SYSTEM=0
for arg in "$@"; do
  case "$arg" in
    --print-env) PRINT_ENV=1 ;;
    --use-system) USE_SYSTEM=1 ;;
    *) echo "ensure-engine: unknown argument $arg" >&2; exit 2 ;;
  esac
done
SYSTEM_SOCK=/var/run/docker.sock
BERTH_SOCK_URL=unix:///run/berth-docker.sock

report() { # <DOCKER_HOST> <started 0|1> <source>
  if [ "$PRINT_ENV" = 1 ]; then
    printf 'export DOCKER_HOST=%q\nexport BERTH_ENGINE_STARTED=%s\nexport BERTH_ENGINE_SOURCE=%s\n' "$1" "$2" "$3"
  else
    echo "$1"
  fi
}

# The engine's own health endpoint, so no docker CLI is needed to find an engine.
answers() { # <DOCKER_HOST>
  local url=$1
  if ! command -v curl >/dev/null 2>&1; then
    command -v docker >/dev/null 2>&1 && DOCKER_HOST="$url" docker info --format '{{.ServerVersion}}' >/dev/null 2>&1
    return
  fi
  case "$url" in
    unix://*) [ -S "${url#unix://}" ] && curl -fsS --max-time 5 --unix-socket "${url#unix://}" http://docker/_ping >/dev/null 2>&1 ;;
    tcp://*) curl -fsS --max-time 5 "http://${url#tcp://}/_ping" >/dev/null 2>&1 ;;
    *) return 1 ;;
  esac
}

is_system_sock() { [ "$1" = "$SYSTEM_SOCK" ] || [ "$1" = /run/docker.sock ]; }

if [ -n "${DOCKER_HOST:-}" ]; then
  if answers "$DOCKER_HOST"; then report "$DOCKER_HOST" 0 docker-host; exit 0; fi
  case "$DOCKER_HOST" in
    unix://*) ;;
    *) echo "ensure-engine: DOCKER_HOST=$DOCKER_HOST does not answer; start that engine or unset DOCKER_HOST" >&2; exit 2 ;;
  esac
  if is_system_sock "${DOCKER_HOST#unix://}"; then
    echo "ensure-engine: the system Docker engine ($DOCKER_HOST) does not answer; start it (e.g. systemctl start docker) or unset DOCKER_HOST" >&2
    exit 2
  fi
elif [ "$USE_SYSTEM" = 1 ] && answers "unix://$SYSTEM_SOCK"; then
  report "unix://$SYSTEM_SOCK" 0 system; exit 0
fi

SOCK_URL="${DOCKER_HOST:-$BERTH_SOCK_URL}"
SOCK="${SOCK_URL#unix://}"
DATA_ROOT="${BERTH_DOCKER_DATA_ROOT:-/var/lib/berth-docker}"
EXEC_ROOT="${BERTH_DOCKER_EXEC_ROOT:-${DATA_ROOT}-exec}"
PIDFILE="${BERTH_DOCKER_PIDFILE:-/run/berth-docker.pid}"
LOG="${BERTH_DOCKER_LOG:-/var/log/berth-docker.log}"
WAIT_SECONDS="${BERTH_DOCKER_WAIT_SECONDS:-60}"

if answers "$SOCK_URL"; then report "$SOCK_URL" 0 berth; exit 0; fi

# Serialise concurrent callers (parallel test workers) so only one installs and starts dockerd.
exec 9>/tmp/berth-docker-engine.lock
flock 9
if answers "$SOCK_URL"; then report "$SOCK_URL" 0 berth; exit 0; fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
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
  mkdir -p "$DATA_ROOT" "$(dirname "$LOG")" "$(dirname "$SOCK")"
  rm -f "$SOCK"
  # --bridge=none/--iptables=false: sandboxes use network `none` (egress through Berth's proxy).
  # 9>&-: the daemon must not inherit (and hold forever) the start-up lock.
  setsid dockerd --bridge=none --iptables=false --ip6tables=false \
    --data-root "$DATA_ROOT" --exec-root "$EXEC_ROOT" \
    --host "$SOCK_URL" --pidfile "$PIDFILE" >>"$LOG" 2>&1 </dev/null 9>&- &
fi

deadline=$(( $(date +%s) + WAIT_SECONDS ))
until answers "$SOCK_URL"; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "ensure-engine: dockerd did not answer on $SOCK_URL within ${WAIT_SECONDS}s; last log lines:" >&2
    tail -n 20 "$LOG" >&2 || true
    exit 1
  fi
  sleep 0.2
done
report "$SOCK_URL" "$STARTED" "$([ "$STARTED" = 1 ] && echo started || echo berth)"
