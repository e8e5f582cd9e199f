# Harness image for this machine: built on the locally debootstrapped base, with the host's own
# Node 20 runtime copied in (no registry image pull needed). See scripts/docker/build-images.sh.
FROM berth/base:bookworm
ARG CLAUDE_CODE_VERSION
ARG CODEX_VERSION
ARG PI_VERSION
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git bash libstdc++6 \
 && rm -rf /var/lib/apt/lists/*
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && npm install -g --no-fund --no-audit --loglevel=error \
      "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" \
      "@openai/codex@${CODEX_VERSION}" \
      "@mariozechner/pi-coding-agent@${PI_VERSION}" \
 && npm cache clean --force \
 && claude --version && codex --version && pi --version
RUN useradd --uid 1000 --user-group --create-home --home-dir /home/agent --shell /bin/bash agent \
 && mkdir -p /workspace && chown agent:agent /workspace
USER agent
WORKDIR /workspace
CMD ["/bin/sh", "-c", "trap 'exit 0' TERM INT; sleep infinity & wait"]
