#!/usr/bin/env bash
# The whole test suite, on a fresh machine or a warm one: installs and starts what it needs
# (npm packages, nats-server, a Docker engine with its own socket, base and harness images,
# the harness CLIs, Chromium, docker-compose), runs lint, type-check and every jest project, then stops the engine
# it started. Prints jest's summary and one closing line "N passed, N failed, N skipped".
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
start=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$1" "$(( $(date +%s) - start ))"; }

step "dependencies"
bash scripts/lib/ensure-deps.sh node apt:nats-server apt:debootstrap apt:chromium apt:ca-certificates apt:curl apt:docker-compose
bash scripts/harness/install-clis.sh >/dev/null

step "docker engine and images"
# shellcheck disable=SC1090
source <(bash scripts/docker/ensure-engine.sh --print-env)
engine_started_here="${BERTH_ENGINE_STARTED:-0}"
cleanup() { [ "$engine_started_here" = 1 ] && bash scripts/docker/stop-engine.sh >/dev/null 2>&1 || true; }
trap cleanup EXIT
bash scripts/docker/build-images.sh

step "lint, type-check, console build"
npx nx show projects >/dev/null
npx eslint . --max-warnings=0
npm run --silent typecheck
bash scripts/lib/ensure-console.sh >/dev/null

step "tests"
mkdir -p tmp && rm -f tmp/jest-results.json
set +e
npx jest --ci --maxWorkers=2 --json --outputFile=tmp/jest-results.json "$@"
status=$?
set -e
if [ -f tmp/jest-results.json ]; then
  node -e '
    const r = require(require("path").resolve(process.argv[1]));
    const skipped = r.numPendingTests + r.numTodoTests;
    console.log(`\n${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
  ' tmp/jest-results.json
  [ -n "${MONGODB_URI:-}" ] || echo "NOT RUN: the MongoDB half of the store contract and the end-to-end turn on MongoDB (set MONGODB_URI to a replica set to run them; the contract cases ran on SQLite and in memory)"
else
  echo "jest wrote no results (exit $status)"
fi
step "done"
exit $status
