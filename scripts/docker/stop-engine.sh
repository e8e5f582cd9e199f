#!/usr/bin/env bash
# Stops the engine started by ensure-engine.sh (only ours, found through our pidfile).
set -euo pipefail
PIDFILE="${BERTH_DOCKER_PIDFILE:-/run/berth-docker.pid}"
WAIT_SECONDS="${BERTH_DOCKER_WAIT_SECONDS:-30}"
[ -f "$PIDFILE" ] || { echo "stop-engine: no engine running (no $PIDFILE)"; exit 0; }
pid="$(cat "$PIDFILE")"
if ! kill -0 "$pid" 2>/dev/null; then rm -f "$PIDFILE"; echo "stop-engine: stale pidfile removed"; exit 0; fi
kill -TERM "$pid"
deadline=$(( $(date +%s) + WAIT_SECONDS ))
while kill -0 "$pid" 2>/dev/null; do
  if [ "$(date +%s)" -ge "$deadline" ]; then kill -KILL "$pid" 2>/dev/null || true; break; fi
  sleep 0.2
done
rm -f "$PIDFILE"
echo "stop-engine: stopped dockerd $pid"
