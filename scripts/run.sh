#!/usr/bin/env bash
# `npm start`: runs the whole platform on one machine with embedded defaults: a nats-server it
# starts, the SQLite store, a Docker engine for sandboxes (the user's own when one answers), the
# five services (the egress proxy is the only one that sees model keys) and the web console.
# Prints where the API and console are and a fresh API key.
# Ctrl-C stops everything it started and exits 0. `npm start -- --help` lists the knobs.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"

usage() {
  cat <<'EOF'
Usage: npm start [-- --help]        (or: bash scripts/run.sh)

Runs Berth on this machine: nats-server, the SQLite store, a Docker engine for sandboxes, the
gateway (API + console), session-kernel, sandbox-manager, turn-reconciler and the egress proxy
(the sandboxes' only way out). The first run
installs what is missing (npm packages, Debian packages, the sandbox images); later runs are quick.
Ctrl-C stops everything it started.

Knobs (environment variables, all optional):
  BERTH_HOME             state directory: SQLite db, NATS store and auth, logs (default ./.berth)
  PORT / HOST            gateway address (default 8080 / 127.0.0.1)
  NATS_PORT              nats-server port (default: a free port)
  DOCKER_HOST            Docker engine to run sandboxes on. Default: the system engine
                         (/var/run/docker.sock) when it answers, else Berth's own engine on
                         unix:///run/berth-docker.sock, started (and stopped again) by this script
  BERTH_MODEL_BASE_URL   model endpoint the egress forwards harnesses to (Messages API; Responses
                         API for Codex); may be on this machine's loopback
  BERTH_MODEL_API_KEY    its key: only the egress gets it, never a sandbox, the journal or a log
  BERTH_EGRESS_UPSTREAM_PROXY  a proxy the egress reaches other hosts through (http://host:port)
  BERTH_MODEL            default model name for agents that do not name one
  BERTH_WARM_POOL_SIZE   warm sandboxes kept per environment in use (default 0)
  BERTH_SANDBOX_IMAGE    sandbox image (default berth/harness:latest, built locally)
  BERTH_OWNER            owner of the API key printed at start (default local)
  BERTH_LOG_LEVEL        service log level: debug, info, warn, error (default info)
  BERTH_SECRET_KEYS      key ring sealing webhook secrets at rest (default: one key made
                         on the first run and kept in $BERTH_HOME/secret-keys)
  BERTH_EGRESS_CA_DIR    the egress's CA for vault credentials over HTTPS (default: made on the
                         first run and kept in $BERTH_HOME/egress-ca; its key never enters a sandbox)
  BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS  true: webhooks and OAuth token endpoints (vault credential
                         refresh) may be loopback/private addresses, token endpoints plain http
  OTEL_EXPORTER_OTLP_ENDPOINT  send traces over OTLP/HTTP to this collector (default: off)

Logs: $BERTH_HOME/logs/ (setup.log for the preparation steps; one JSON-lines file per service).
EOF
}
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  '') ;;
  *) echo "berth: unknown argument $1" >&2; usage >&2; exit 2 ;;
esac

export NX_DAEMON=false
home="${BERTH_HOME:-$repo/.berth}"
logs="$home/logs"
mkdir -p "$logs" "$home/nats"
setup_log="$logs/setup.log"
: >"$setup_log"
port="${PORT:-8080}"
host="${HOST:-127.0.0.1}"

say() { echo "berth: $*"; }
elapsed() { local s=$(( SECONDS - $1 )); [ "$s" -ge 60 ] && echo "$((s / 60))m$((s % 60))s" || echo "${s}s"; }
tail_log() { tail -n "${2:-15}" "$1" 2>/dev/null | sed 's/^/    /' >&2 || true; }
# One preparation step: a line when it starts and one when it ends; its output goes to setup.log.
step() {
  local title=$1 t0=$SECONDS
  shift
  say "$title…"
  if ! "$@" >>"$setup_log" 2>&1; then
    [ "$stopping" = 1 ] && finish_stop
    say "$title failed; the last lines of $setup_log:" >&2
    tail_log "$setup_log" 20
    exit 1
  fi
  say "  done ($(elapsed "$t0"))"
}
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# Services, in start order; they are stopped in reverse. Each runs in its own session (setsid) so
# a terminal's Ctrl-C reaches only this script, which then stops them in order.
names=()
pids=()
stopping=0
stop_all() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[$i]}" 2>/dev/null || true
    wait "${pids[$i]}" 2>/dev/null || true
  done
  if [ "${BERTH_ENGINE_STARTED:-0}" = 1 ]; then bash scripts/docker/stop-engine.sh >>"$setup_log" 2>&1 || true; fi
}
finish_stop() {
  say "stopping…"
  stop_all
  trap - EXIT
  say "stopped."
  exit 0
}
on_signal() { stopping=1; }
trap on_signal INT TERM HUP
trap stop_all EXIT

step "npm packages" bash scripts/lib/ensure-deps.sh node
step "Debian packages (nats-server, debootstrap, curl)" bash scripts/lib/ensure-deps.sh apt:nats-server apt:debootstrap apt:ca-certificates apt:curl
step "Docker engine" bash -c 'bash scripts/docker/ensure-engine.sh --use-system --print-env >"$1"' _ "$home/engine.env"
# shellcheck disable=SC1091
source "$home/engine.env"
case "$BERTH_ENGINE_SOURCE" in
  docker-host) say "  using the Docker engine at $DOCKER_HOST (from DOCKER_HOST)" ;;
  system) say "  using the system Docker engine at $DOCKER_HOST" ;;
  berth) say "  using Berth's own Docker engine at $DOCKER_HOST (already running)" ;;
  started) say "  started Berth's own Docker engine at $DOCKER_HOST (stopped again with Berth)" ;;
esac
step "sandbox images (the first build takes a few minutes)" bash scripts/docker/build-images.sh
step "web console" bash scripts/lib/ensure-console.sh

start() { # <name> <command…>; output to logs/<name>.log
  local name=$1
  shift
  setsid "$@" >"$logs/$name.log" 2>&1 </dev/null &
  names+=("$name")
  pids+=($!)
}

# The service that exited, by name; empty while all run.
exited_service() {
  local i
  for i in "${!pids[@]}"; do kill -0 "${pids[$i]}" 2>/dev/null || { echo "${names[$i]}"; return; }; done
}
report_exit() { # <name>
  say "$1 stopped unexpectedly; the last lines of $logs/$1.log:" >&2
  tail_log "$logs/$1.log"
}

# NATS requires credentials: one user per service, created once into the state dir (0600), and
# the gateway's issuer for subscriber credentials (docs/messaging.md). A store written by an
# earlier, unauthenticated run moves into Berth's account.
auth="$home/nats-auth"
node -r @swc-node/register apps/gateway/src/cli/nats-init.ts --dir "$auth" --resolver-dir "$home/nats/resolver" --jetstream-dir "$home/nats" 2>>"$setup_log"
nats_port="${NATS_PORT:-$(free_port)}"
cat >"$home/nats/nats.conf" <<CONF
host: 127.0.0.1
port: $nats_port
jetstream { store_dir: "$home/nats" }
include ../nats-auth/server-auth.conf
CONF
export NATS_URL="nats://127.0.0.1:$nats_port"
export BERTH_STORE_URL="${BERTH_STORE_URL:-sqlite:$home/berth.db}"
export BERTH_WORKSPACE_DIR="${BERTH_WORKSPACE_DIR:-$home/workspaces}"
export PORT="$port" HOST="$host"
# The key that seals webhook secrets (and vault credentials) at rest: made once, kept with the data.
keys_file="$home/secret-keys"
if [ -z "${BERTH_SECRET_KEYS:-}" ] && [ -z "${BERTH_SECRET_KEYS_FILE:-}" ]; then
  [ -s "$keys_file" ] || (umask 077 && printf 'k1:%s\n' "$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64"))')" >"$keys_file")
  export BERTH_SECRET_KEYS_FILE="$keys_file"
fi
# The egress's CA (it terminates TLS for the hosts of vault credentials): made by the egress on its
# first start, kept with the data; only the egress reads its key.
export BERTH_EGRESS_CA_DIR="${BERTH_EGRESS_CA_DIR:-$home/egress-ca}"
metrics_ports=()
# One directory per sandbox for its egress socket (a unix socket path must stay under 108 bytes).
egress_dir="$home/egress"
[ ${#egress_dir} -le 70 ] || egress_dir="${XDG_RUNTIME_DIR:-/tmp}/berth-egress-$(printf %s "$home" | sha256sum | cut -c1-12)"
export BERTH_EGRESS_DIR="${BERTH_EGRESS_DIR:-$egress_dir}"
# Only the egress holds model keys: every other service starts without them.
no_keys=()
for k in $(compgen -e | grep -E '^BERTH_MODEL_(API_KEY|KEY_[A-Z0-9_]+)$' || true); do no_keys+=(-u "$k"); done

say "starting nats-server and the services…"
start nats nats-server -c "$home/nats/nats.conf"
# Each service connects as its own NATS user.
for name in session-kernel egress sandbox-manager turn-reconciler; do
  metrics_ports+=("$name=$(free_port)")
  if [ "$name" = egress ]; then drop=(); else drop=("${no_keys[@]}"); fi
  start "$name" env "${drop[@]}" NATS_CREDS="$auth/creds/$name.creds" BERTH_METRICS_PORT="${metrics_ports[-1]#*=}" node -r @swc-node/register "apps/$name/src/main.ts"
done
start gateway env "${no_keys[@]}" NATS_CREDS="$auth/creds/gateway.creds" BERTH_NATS_ISSUER="$auth/issuer.json" node -r @swc-node/register apps/gateway/src/main.ts

t0=$SECONDS
until curl -fsS "http://$host:$port/readyz" >/dev/null 2>&1; do
  [ "$stopping" = 1 ] && finish_stop
  gone="$(exited_service)"
  if [ -n "$gone" ]; then report_exit "$gone"; exit 1; fi
  if [ $(( SECONDS - t0 )) -ge 60 ]; then say "the gateway did not become ready within 60 s; see $logs/gateway.log" >&2; exit 1; fi
  sleep 0.2
done

key="$(node -r @swc-node/register apps/gateway/src/cli/create-api-key.ts --owner "${BERTH_OWNER:-local}" --name run.sh --quiet 2>>"$setup_log")"
cat <<MSG

Berth is running.
  API:      http://$host:$port/v1        (OpenAPI: http://$host:$port/openapi.json)
  Console:  http://$host:$port/console/
  API key:  $key
  Metrics:  http://$host:$port/metrics (gateway); /metrics on ${metrics_ports[*]/=/ :}
  NATS:     $NATS_URL  (per-owner read-only credentials: POST /v1/nats_credentials, docs/events.md)
  Docker:   $DOCKER_HOST
  Logs:     $logs/

  Try:  bin/berth --api-url http://$host:$port --api-key $key agents list
MSG
if [ -z "${BERTH_MODEL_BASE_URL:-}" ]; then
  cat <<'MSG'

  No model configured: turns will fail with a clear error until you set one, e.g.
    BERTH_MODEL_BASE_URL=https://api.anthropic.com BERTH_MODEL_API_KEY=sk-… npm start
  (an environment may also override the endpoint in its config.model).
MSG
fi
echo
echo "Ctrl-C stops Berth."

# Until Ctrl-C (a trapped signal makes `wait` return) or a service exits on its own.
while [ "$stopping" = 0 ]; do
  wait -n "${pids[@]}" 2>/dev/null || true
  [ "$stopping" = 1 ] && break
  gone="$(exited_service)"
  if [ -n "$gone" ]; then report_exit "$gone"; exit 1; fi
done
finish_stop
