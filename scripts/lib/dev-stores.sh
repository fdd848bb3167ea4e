# The private stores `make dev` runs under .data/: a nats-server with JetStream, authenticated as
# deployed, and a Postgres cluster holding the herald database. Sourced by scripts/dev.sh after
# dev-common.sh, never executed; dev.sh defines port_busy and rotate_log. Each start_* records its
# pid in .data/run (dev.sh's cleanup stops them) and sets the URL it serves.

# shellcheck source=nats-bin.sh
. "$ROOT/scripts/lib/nats-bin.sh"
# shellcheck source=nats-auth.sh
. "$ROOT/scripts/lib/nats-auth.sh"

# start_nats: nats-server on 127.0.0.1:$NATS_PORT; sets NATS_URL, NATS_SERVER_ENV and the NATS
# users' passwords (nats_auth_ensure).
start_nats() {
  local i
  NATS_BIN=$(nats_server_bin)
  [[ -n $NATS_BIN ]] || die "nats-server $(nats_pinned_version) or newer is not installed: run make deps"
  say "nats-server $(nats_server_version_of "$NATS_BIN") ($NATS_BIN)"
  mkdir -p "$DATA/nats"
  rotate_log nats
  # Authentication as deployed: deploy/nats/users.conf (one user per service, the auth callout for
  # backends), its passwords and callout key in .data/nats-auth.env.
  nats_auth_ensure "$DATA"
  cp "$ROOT/deploy/nats/users.conf" "$DATA/nats/users.conf"
  printf 'jetstream { store_dir: "%s" }\ninclude users.conf\n' "$DATA/nats" >"$DATA/nats/herald.conf"
  # setsid: a terminal's Ctrl-C reaches only this script, which then stops each process once, in
  # order; the services treat a second signal as "exit now".
  setsid env "${NATS_SERVER_ENV[@]}" "$NATS_BIN" -n herald-dev -a 127.0.0.1 -p "$NATS_PORT" -c "$DATA/nats/herald.conf" >"$LOGS/nats.log" 2>&1 &
  echo $! >"$RUN/nats.pid"
  for ((i = 0; ; i++)); do
    port_busy "$NATS_PORT" && break
    proc_alive "$(<"$RUN/nats.pid")" || { tail -n 20 "$LOGS/nats.log" >&2; die 'nats-server exited; log above'; }
    ((i < 200)) || die "nats-server is not listening on 127.0.0.1:$NATS_PORT after 20s; see $LOGS/nats.log"
    sleep 0.1
  done
  NATS_URL=nats://127.0.0.1:$NATS_PORT
  say "nats-server (JetStream) on $NATS_URL"
  return 0
}

# psql_q DATABASE SQL: the unaligned result rows, from the cluster start_postgres started.
psql_q() { "$PG/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$1" -XtAq -v ON_ERROR_STOP=1 -c "$2"; }

# start_postgres: the cluster in $PGDATA on 127.0.0.1:$PG_PORT (made on first use), with the
# herald database; sets PG and DATABASE_URL.
start_postgres() {
  PG=$(pg_bin) || die 'PostgreSQL is not installed: run make deps'
  [[ -x $PG/initdb && -x $PG/pg_ctl && -x $PG/psql ]] || die "initdb, pg_ctl or psql is missing from $PG: reinstall postgresql"
  mkdir -p "$PGSOCK"
  rotate_log postgres
  touch "$LOGS/postgres.log"
  if is_root; then
    chown postgres: "$PGSOCK" "$LOGS/postgres.log"
    runuser -u postgres -- test -x "$DATA" ||
      die "the postgres user cannot reach $DATA: make its parent directories searchable (chmod o+x) or move the checkout"
  fi
  if [[ ! -f $PGDATA/PG_VERSION ]]; then
    say "creating a Postgres cluster in $PGDATA"
    rm -rf "$PGDATA"
    mkdir -m 700 "$PGDATA"
    is_root && chown postgres: "$PGDATA"
    as_pg "$PG/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --locale=C >"$LOGS/initdb.log" 2>&1 ||
      { tail -n 20 "$LOGS/initdb.log" >&2; die 'initdb failed; log above'; }
  fi
  as_pg "$PG/pg_ctl" -D "$PGDATA" -l "$LOGS/postgres.log" -w -t 60 \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k '$PGSOCK'" start >/dev/null ||
    { tail -n 20 "$LOGS/postgres.log" >&2; die 'Postgres did not start; log above'; }
  if [[ -z $(psql_q postgres "select 1 from pg_database where datname = 'herald'") ]]; then
    psql_q postgres 'create database herald' >/dev/null
  fi
  DATABASE_URL=postgres://postgres@127.0.0.1:$PG_PORT/herald
  say "Postgres on $DATABASE_URL"
  return 0
}
