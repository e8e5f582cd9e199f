# syntax=docker/dockerfile:1.7
# One image for Berth's five services (gateway, session-kernel, sandbox-manager, turn-reconciler, egress).
# The service is chosen by the command, e.g. `node -r @swc-node/register apps/gateway/src/main.ts`
# (the default). TypeScript runs through @swc-node/register, as in scripts/run.sh: there is no
# server build step yet. Build from the repository root:
#   docker build -f deploy/images/berth.Dockerfile -t berth/berth:0.1.0 .
# Where no registry can be reached, scripts/docker/build-berth-image.sh builds it on the locally
# built base with the host's Node (NODE_IMAGE=berth/node:<hash>); the test suite does that.

ARG NODE_IMAGE=node:20-bookworm-slim

# Dependencies, dev ones included (vite builds the console; better-sqlite3 compiles when no prebuilt
# binary can be fetched, hence the toolchain). Only the lockfile invalidates this layer.
FROM ${NODE_IMAGE} AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error

# Runtime dependencies only, compiled on the same base as the final stage (glibc, node ABI).
FROM deps AS prod-deps
RUN npm prune --omit=dev --no-audit --no-fund --loglevel=error

FROM deps AS build
COPY tsconfig.base.json tsconfig.json .swcrc ./
COPY apps ./apps
COPY libs ./libs
RUN npm run build:console

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    NO_COLOR=1 \
    HOST=0.0.0.0 \
    PORT=8080 \
    BERTH_LOG_FORMAT=json \
    BERTH_CONSOLE_DIR=apps/console/dist \
    BERTH_STORE_URL=sqlite:/var/lib/berth/berth.db \
    XDG_CACHE_HOME=/tmp/.cache
# XDG_CACHE_HOME: @swc/core unpacks its native addon into the user cache at start, so on a read-only
# root that cache lives in /tmp (which must allow exec: Compose mounts it `exec`, Kubernetes an emptyDir).
WORKDIR /app
# The egress issues its TLS certificates with the system openssl (the slim base has only the library).
RUN apt-get update && apt-get install -y --no-install-recommends openssl && rm -rf /var/lib/apt/lists/*
# The `node` user (uid 1000) of the base image runs the services; /var/lib/berth holds the
# embedded SQLite store when one is used.
RUN mkdir -p /var/lib/berth && chown node:node /var/lib/berth
COPY --from=prod-deps --chown=root:root /src/node_modules ./node_modules
COPY --from=build --chown=root:root /src/package.json /src/tsconfig.base.json /src/tsconfig.json /src/.swcrc ./
# Sources read at runtime: the services' and libraries' TypeScript, and the built console.
COPY --from=build --chown=root:root /src/libs ./libs
COPY --from=build --chown=root:root /src/apps/gateway/src ./apps/gateway/src
COPY --from=build --chown=root:root /src/apps/session-kernel/src ./apps/session-kernel/src
COPY --from=build --chown=root:root /src/apps/sandbox-manager/src ./apps/sandbox-manager/src
COPY --from=build --chown=root:root /src/apps/turn-reconciler/src ./apps/turn-reconciler/src
COPY --from=build --chown=root:root /src/apps/egress/src ./apps/egress/src
# The `berth` command line, for store maintenance inside a container (`store check`, `store backup`).
COPY --from=build --chown=root:root /src/apps/cli/src ./apps/cli/src
COPY --from=build --chown=root:root /src/apps/console/dist ./apps/console/dist
USER node
EXPOSE 8080 9464
VOLUME ["/var/lib/berth"]
# Only meaningful for the gateway; compose overrides it (or disables it) for the other services.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "-r", "@swc-node/register", "apps/gateway/src/main.ts"]
