#!/usr/bin/env bash
# Builds the web console (apps/console/dist) when the build is missing or stale: a hash of its
# sources, the library it bundles (libs/sse) and the lockfile is kept beside the build and
# compared on every call, so an unchanged tree costs a second and a changed one rebuilds.
#   ensure-console.sh           builds if needed; prints "console: built" or "console: up to date"
#   ensure-console.sh --force   always builds
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"
dist=apps/console/dist
stamp="$dist/.berth-build-hash"
want="$( { find apps/console libs/sse \( -path "$dist" -o -path apps/console/src/e2e \) -prune -o -type f ! -name '*.spec.ts' ! -name '*.spec.tsx' -print \
           | LC_ALL=C sort | xargs sha256sum; sha256sum package-lock.json; } | sha256sum | cut -c1-64)"
if [ "${1:-}" != --force ] && [ -f "$dist/index.html" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "console: up to date"; exit 0
fi
# Vite bundles React's development build unless NODE_ENV is production.
NODE_ENV=production node node_modules/vite/bin/vite.js build --config apps/console/vite.config.ts --logLevel warn
echo "$want" > "$stamp"
echo "console: built"
