# Berth sandbox base, for hosts that can pull public images. Same contract as the locally
# debootstrapped berth/base:bookworm (scripts/docker/build-images.sh): Debian bookworm, the
# sandbox user's writable places owned by uid 1000, a PID 1 that exits on SIGTERM.
#   docker build -f deploy/images/base.Dockerfile -t berth/base:bookworm .
FROM debian:bookworm-slim
RUN mkdir -p /workspace /home/agent && chown 1000:1000 /workspace /home/agent
CMD ["/bin/sh", "-c", "trap 'exit 0' TERM INT; sleep infinity & wait"]
