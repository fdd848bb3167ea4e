# Local stand-in for the official postgres:15-alpine, for machines that cannot pull it:
# Debian's PostgreSQL 15, with an entrypoint that creates the cluster on first start from
# POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB as the official image does, then runs postgres
# as the postgres user. scripts/lib/docker.sh builds it only when the official one is unavailable.
ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
  && apt-get install -y --no-install-recommends postgresql-15 gosu \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
  && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
  PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
