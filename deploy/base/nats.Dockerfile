# Local stand-in for the official nats:<pin>-alpine, for machines that cannot pull it: the pinned
# nats-server (a static Go build, made by `make deps`) on Debian, with wget for the healthcheck and
# the official image's entrypoint behaviour (arguments starting with '-' go to nats-server).
# scripts/lib/docker.sh builds it from a context holding only that binary and the entrypoint.
ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
  && apt-get install -y --no-install-recommends wget ca-certificates \
  && rm -rf /var/lib/apt/lists/*
COPY nats-server /usr/local/bin/nats-server
COPY nats-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
EXPOSE 4222 6222 8222
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["nats-server", "--config", "/etc/nats/nats-server.conf"]
