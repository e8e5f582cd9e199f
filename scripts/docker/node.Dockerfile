# Node runtime image for this machine: the locally debootstrapped base with the host's own Node 20,
# npm and Node headers copied in (no registry image pull). Stands in for node:20-bookworm-slim as
# NODE_IMAGE of deploy/images/berth.Dockerfile; see scripts/docker/build-berth-image.sh.
FROM berth/base:bookworm
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates libstdc++6 \
 && rm -rf /var/lib/apt/lists/*
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY include /usr/local/include/node
# build-ca/: the build host's extra CA certificates (e.g. a TLS-inspecting egress proxy), so npm in
# an image built from this one reaches the registry the way the host does; empty when it has none.
COPY build-ca /usr/local/share/ca-certificates/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && update-ca-certificates >/dev/null \
 && useradd --uid 1000 --user-group --create-home --shell /bin/bash node \
 && node --version && npm --version
# Native modules (better-sqlite3) compile against these headers instead of downloading them.
ENV npm_config_nodedir=/usr/local NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
