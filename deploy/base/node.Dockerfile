# Local stand-in for the official node:20-slim, for machines that cannot pull it: Node 20.19+ and
# npm from the Debian release that packages them, a `node` user (uid 1000) as in the official
# image. scripts/lib/docker.sh builds it only when node:20-slim is neither present nor pullable.
ARG DEBIAN_IMAGE=debian:trixie-slim
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
  && apt-get install -y --no-install-recommends nodejs npm ca-certificates \
  && rm -rf /var/lib/apt/lists/* \
  && groupadd --gid 1000 node \
  && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
  && node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error("Node "+process.version+" is older than 20.19"); process.exit(1); }'
CMD ["node"]
