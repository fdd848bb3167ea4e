# Backups of one Herald compose stack (scripts/compose.sh backup DIR, restore DIR). Sourced after
# docker.sh and compose-stack.sh, never executed; the caller defines say and die.
#
# Postgres: pg_dump's custom format, taken and restored inside the postgres container.
# JetStream: every stream of the account (the offline queue, the KV buckets, the status stream)
# snapshotted over NATS with the nats CLI, run in a one-off container on the stack's network.

# The nats CLI (static) in a throwaway container of the nats service: on the backend network,
# with the CA, as the operator (herald-admin, whose password that container's environment holds).
# Extra docker compose run options before `--`.
stack_nats_cli() {
  local cli opts=()
  # make deps's build when it is static (it is since deps builds with CGO_ENABLED=0).
  cli=$(nats_cli_bin)
  if [[ -z $cli ]] || grep -qa 'ld-linux' "$cli"; then
    cli=$(go_static_tool "github.com/nats-io/natscli/nats@v$NATSCLI_VERSION")
  fi
  while [[ $# -gt 0 && $1 != -- ]]; do
    opts+=("$1")
    shift
  done
  shift
  stack_compose run --rm --no-deps -T --entrypoint /bin/sh \
    -v "$cli:/usr/local/bin/nats-cli:ro" \
    -e NATS_URL="tls://$STACK_NATS_SERVICE:4222" -e NATS_USER=herald-admin -e NATS_CA=/tls/ca.crt \
    "${opts[@]}" "$STACK_NATS_SERVICE" -c 'NATS_PASSWORD=$HERALD_NATS_PASSWORD_ADMIN exec /usr/local/bin/nats-cli "$@"' nats-cli "$@"
}

stack_backup() {
  local dir=$1
  [[ -n $dir ]] || die 'usage: scripts/compose.sh backup DIR'
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [[ ! -e $dir/postgres.dump && ! -e $dir/jetstream ]] || die "$dir already holds a backup: name an empty folder"
  # shellcheck source=nats-bin.sh
  . "$DOCKER_ROOT/scripts/lib/nats-bin.sh"
  say "Postgres: pg_dump to $dir/postgres.dump"
  stack_compose exec -T postgres pg_dump -U herald -d herald --format=custom >"$dir/postgres.dump.part"
  mv "$dir/postgres.dump.part" "$dir/postgres.dump"
  say "JetStream: every stream to $dir/jetstream/"
  mkdir -p "$dir/jetstream"
  # Written by the CLI as root inside its container: handed back to the caller afterwards.
  stack_nats_cli -v "$dir/jetstream:/backup" -- backup account /backup --force --consumers ||
    die 'the JetStream backup failed (output above)'
  as_root chown -R "$(id -u):$(id -g)" "$dir/jetstream"
  say "backup complete in $dir"
}

# Restores DIR into the stack: the Herald services are stopped meanwhile (nothing writes), the
# streams in the backup replace their namesakes, the database is replaced, then everything starts.
stack_restore() {
  local dir=$1 stream
  [[ -n $dir && -s $dir/postgres.dump && -d $dir/jetstream ]] ||
    die "usage: scripts/compose.sh restore DIR (DIR holds postgres.dump and jetstream/ from scripts/compose.sh backup)"
  dir=$(cd "$dir" && pwd)
  # shellcheck source=nats-bin.sh
  . "$DOCKER_ROOT/scripts/lib/nats-bin.sh"
  say 'stopping the Herald services (NATS and Postgres stay up)'
  stack_compose stop "${STACK_SERVICES[@]}" >/dev/null 2>&1 || true
  stack_compose up -d --wait --wait-timeout "$HERALD_COMPOSE_WAIT_S" "$STACK_NATS_SERVICE" postgres
  say "Postgres: restoring $dir/postgres.dump"
  stack_compose exec -T postgres pg_restore -U herald -d herald --clean --if-exists --no-owner \
    --single-transaction <"$dir/postgres.dump" || die 'pg_restore failed (output above)'
  say "JetStream: restoring the streams of $dir/jetstream/"
  for stream in $(stack_nats_cli -- stream ls --names); do
    [[ -d $dir/jetstream/$stream ]] && { stack_nats_cli -- stream rm --force "$stream" >/dev/null || die "removing stream $stream failed"; }
  done
  stack_nats_cli -v "$dir/jetstream:/backup:ro" -- backup restore account /backup ||
    die 'the JetStream restore failed (output above)'
  say 'starting the Herald services'
  stack_compose up -d --wait --wait-timeout "$HERALD_COMPOSE_WAIT_S"
  say "restored from $dir"
}
