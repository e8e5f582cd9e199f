# Berth harness image, for hosts that can pull public images: Node 20 plus the Claude Code, Codex
# and Pi CLIs, run as the non-root `agent` user (uid 1000) in /workspace. Versions are pinned to
# the ones the harness adapters are tested against (keep in step with scripts/docker/build-images.sh).
#   docker build -f deploy/images/harness.Dockerfile -t berth/harness:latest .
FROM node:20-bookworm-slim
ARG CLAUDE_CODE_VERSION=2.1.332
ARG CODEX_VERSION=0.171.0
ARG PI_VERSION=0.73.1
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git bash socat curl \
 && rm -rf /var/lib/apt/lists/*
RUN npm install -g --no-fund --no-audit --loglevel=error \
      "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" \
      "@openai/codex@${CODEX_VERSION}" \
      "@mariozechner/pi-coding-agent@${PI_VERSION}" \
 && npm cache clean --force \
 && claude --version && codex --version && PI_OFFLINE=1 pi --version
# The node image ships a `node` user at uid 1000: rename it to `agent` with Berth's home.
RUN usermod --login agent --home /home/agent --move-home node \
 && groupmod --new-name agent node \
 && mkdir -p /workspace && chown -R agent:agent /home/agent /workspace
USER agent
WORKDIR /workspace
ENV HOME=/home/agent
CMD ["/bin/sh", "-c", "trap 'exit 0' TERM INT; sleep infinity & wait"]
