# Harness image for this machine: built on the locally debootstrapped base, with the host's own
# Node 20 runtime copied in (no registry image pull needed). See scripts/docker/build-images.sh.
FROM berth/base:bookworm
ARG CLAUDE_CODE_VERSION
ARG CODEX_VERSION
ARG PI_VERSION
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git bash libstdc++6 socat curl \
 && rm -rf /var/lib/apt/lists/*
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
# build-ca/: the build host's extra CA certificates (e.g. a TLS-inspecting egress proxy), trusted
# by npm for this one step only; empty when the host has none.
COPY build-ca /tmp/build-ca
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && cat /etc/ssl/certs/ca-certificates.crt /tmp/build-ca/*.crt > /tmp/build-ca/bundle.pem 2>/dev/null; \
    NODE_EXTRA_CA_CERTS=/tmp/build-ca/bundle.pem npm install -g --no-fund --no-audit --loglevel=error --fetch-timeout=60000 --fetch-retries=4 \
      "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" \
      "@openai/codex@${CODEX_VERSION}" \
      "@mariozechner/pi-coding-agent@${PI_VERSION}" \
 && rm -rf /tmp/build-ca && npm cache clean --force \
 && claude --version && codex --version && PI_OFFLINE=1 pi --version
RUN useradd --uid 1000 --user-group --no-create-home --home-dir /home/agent --shell /bin/bash agent \
 && cp -rT /etc/skel /home/agent && mkdir -p /workspace && chown -R agent:agent /home/agent /workspace
USER agent
WORKDIR /workspace
CMD ["/bin/sh", "-c", "trap 'exit 0' TERM INT; sleep infinity & wait"]
