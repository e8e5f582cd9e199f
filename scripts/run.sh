#!/usr/bin/env bash
# Runs the whole platform on one machine with embedded defaults: a nats-server it starts, the
# SQLite store, a Docker engine for sandboxes, and the four services. Prints where the API and
# console are and a fresh API key. Ctrl-C stops everything it started.
#
# Environment (all optional):
#   BERTH_HOME            state directory (default ./.berth): SQLite db, NATS store and auth, logs
#   PORT / HOST           gateway address (default 8080 / 127.0.0.1)
#   NATS_PORT             (default: a free port)
#   BERTH_MODEL_BASE_URL  model endpoint handed to harnesses (Messages API, or Responses API for Codex)
#   BERTH_MODEL_API_KEY   its key (never written to the journal or logs)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
export NX_DAEMON=false
home="${BERTH_HOME:-$repo/.berth}"
mkdir -p "$home/logs" "$home/nats"
port="${PORT:-8080}"
host="${HOST:-127.0.0.1}"

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

echo "berth: preparing (first run installs packages and builds images; later runs are quick)…"
bash scripts/lib/ensure-deps.sh node apt:nats-server apt:debootstrap apt:ca-certificates apt:curl
# shellcheck disable=SC1090
source <(bash scripts/docker/ensure-engine.sh --print-env)
bash scripts/docker/build-images.sh

pids=()
stop_all() {
  trap - INT TERM EXIT
  echo; echo "berth: stopping…"
  for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[$i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${BERTH_ENGINE_STARTED:-0}" = 1 ]; then bash scripts/docker/stop-engine.sh >/dev/null 2>&1 || true; fi
}
trap stop_all INT TERM EXIT

# NATS requires credentials: one user per service, created once into the state dir (0600), and
# the gateway's issuer for subscriber credentials (docs/messaging.md). A store written by an
# earlier, unauthenticated run moves into Berth's account.
auth="$home/nats-auth"
node -r @swc-node/register apps/gateway/src/cli/nats-init.ts --dir "$auth" --resolver-dir "$home/nats/resolver" --jetstream-dir "$home/nats"
nats_port="${NATS_PORT:-$(free_port)}"
cat >"$home/nats/nats.conf" <<CONF
host: 127.0.0.1
port: $nats_port
jetstream { store_dir: "$home/nats" }
include ../nats-auth/server-auth.conf
CONF
nats-server -c "$home/nats/nats.conf" >"$home/logs/nats.log" 2>&1 &
pids+=($!)
export NATS_URL="nats://127.0.0.1:$nats_port"
export BERTH_STORE_URL="${BERTH_STORE_URL:-sqlite:$home/berth.db}"
export PORT="$port" HOST="$host"

# Each service connects as its own NATS user; extra NAME=VALUE arguments go to its environment.
start_service() {
  local name=$1
  shift
  env NATS_CREDS="$auth/creds/$name.creds" "$@" node -r @swc-node/register "apps/$name/src/main.ts" >"$home/logs/$name.log" 2>&1 &
  pids+=($!)
}
start_service session-kernel
start_service sandbox-manager
start_service turn-reconciler
start_service gateway BERTH_NATS_ISSUER="$auth/issuer.json"

for _ in $(seq 1 150); do
  curl -fsS "http://$host:$port/readyz" >/dev/null 2>&1 && break
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || { echo "berth: a service exited during start; see $home/logs/" >&2; exit 1; }; done
  sleep 0.2
done
curl -fsS "http://$host:$port/readyz" >/dev/null || { echo "berth: gateway not ready; see $home/logs/" >&2; exit 1; }

key="$(node -r @swc-node/register apps/gateway/src/cli/create-api-key.ts --owner "${BERTH_OWNER:-local}" --name run.sh --quiet)"
cat <<MSG

Berth is running.
  API:      http://$host:$port/v1        (OpenAPI: http://$host:$port/openapi.json)
  Console:  http://$host:$port/console/
  API key:  $key
  NATS:     $NATS_URL  (per-owner read-only credentials: POST /v1/nats_credentials, docs/events.md)
  Logs:     $home/logs/

  Try:  bin/berth --api-url http://$host:$port --api-key $key agents list
MSG
if [ -z "${BERTH_MODEL_BASE_URL:-}" ]; then
  cat <<'MSG'

  No model configured: turns will fail with a clear error until you set one, e.g.
    BERTH_MODEL_BASE_URL=https://api.anthropic.com BERTH_MODEL_API_KEY=sk-… npm start
  (an environment may also override the endpoint in its config.model).
MSG
fi
echo; echo "Ctrl-C stops Berth."
wait -n "${pids[@]}" || true
echo "berth: a service stopped unexpectedly; see $home/logs/" >&2
