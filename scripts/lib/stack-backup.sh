# Backups of one Herald stack, the single-host one or the cluster (scripts/compose.sh and
# scripts/cluster.sh backup DIR, restore DIR; make backup, make restore). Sourced after docker.sh
# and compose-stack.sh, never executed; the caller defines say and die.
#
# Postgres: pg_dump's custom format, taken and restored inside the postgres container.
# JetStream: every stream of the account (the offline queue, the KV buckets, the status stream)
# snapshotted over NATS with the nats CLI, run in a one-off container on the stack's network and
# given every NATS node: on a cluster each stream's snapshot comes from its leader, wherever it is.
# A restore creates each stream with the configuration its snapshot holds, replicas and placement
# included (natscli 0.5.1 `backup restore account`: the stream's backup.json config, unchanged),
# so a cluster's streams come back at 3 replicas. nats-server places a restored R3 stream on nodes
# its meta leader has heard from: every node of the cluster must be up, hence stack_nats_ready.

# The nats CLI (static) in a throwaway container of a NATS service: on the backend network, with
# the CA, as the operator (herald-admin, whose password that container's environment holds),
# connected to any of the stack's NATS nodes. Extra docker compose run options before `--`.
stack_nats_cli() {
  local cli opts=() urls
  # shellcheck source=nats-bin.sh
  . "$DOCKER_ROOT/scripts/lib/nats-bin.sh"
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
  urls=$(printf 'tls://%s:4222,' "${STACK_NATS_SERVICES[@]}")
  stack_compose run --rm --no-deps -T --entrypoint /bin/sh \
    -v "$cli:/usr/local/bin/nats-cli:ro" \
    -e NATS_URL="${urls%,}" -e NATS_USER=herald-admin -e NATS_CA=/tls/ca.crt \
    "${opts[@]}" "$STACK_NATS_SERVICE" -c 'NATS_PASSWORD=$HERALD_NATS_PASSWORD_ADMIN exec /usr/local/bin/nats-cli "$@"' nats-cli "$@"
}

# Waits until every NATS node's full /healthz answers (JetStream on, its meta group led and caught
# up), bounded by HERALD_COMPOSE_WAIT_S. The compose healthcheck asks only that JetStream be
# enabled, and a fresh cluster takes a moment more to elect its meta leader.
stack_nats_ready() {
  local deadline=$((SECONDS + HERALD_COMPOSE_WAIT_S)) svc
  local -a pending
  for (( ; ; )); do
    pending=()
    for svc in "${STACK_NATS_SERVICES[@]}"; do
      stack_compose exec -T "$svc" wget -q -O /dev/null http://127.0.0.1:8222/healthz 2>/dev/null ||
        pending+=("$svc")
    done
    [[ ${#pending[@]} -gt 0 ]] || return 0
    ((SECONDS < deadline)) ||
      die "JetStream not ready on ${pending[*]} within ${HERALD_COMPOSE_WAIT_S}s: every node must be up to restore"
    sleep 1
  done
}

stack_backup() {
  local dir=$1
  [[ -n $dir ]] || die "usage: $STACK_SCRIPT backup DIR"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [[ ! -e $dir/postgres.dump && ! -e $dir/jetstream ]] || die "$dir already holds a backup: name an empty folder"
  # Which shape it came from: a cluster's R3 streams cannot be placed on the single node.
  printf '%s\n' "$HERALD_STACK" >"$dir/stack"
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

# Removes the streams DIR/jetstream holds from the stack, then restores them all. On a cluster a
# removal is a proposal to the meta leader, so a restore right after it may still find the name
# taken, or a node not yet heard from: the pair is tried three times.
stack_streams_restore() {
  local dir=$1 try stream
  for try in 1 2 3; do
    for stream in $(stack_nats_cli -- stream ls --names); do
      [[ -d $dir/jetstream/$stream ]] || continue
      stack_nats_cli -- stream rm --force "$stream" >/dev/null || die "removing stream $stream failed"
    done
    stack_nats_cli -v "$dir/jetstream:/backup:ro" -- backup restore account /backup && return 0
    ((try < 3)) || break
    say 'the JetStream restore failed (output above): removing its streams and trying again'
    sleep 2
  done
  die 'the JetStream restore failed three times (output above)'
}

# Restores DIR into the stack: the Herald services are stopped meanwhile (nothing writes), the
# streams in the backup replace their namesakes, the database is replaced, then everything starts.
stack_restore() {
  local dir=$1 shape
  [[ -n $dir && -s $dir/postgres.dump && -d $dir/jetstream ]] ||
    die "usage: $STACK_SCRIPT restore DIR (DIR holds postgres.dump and jetstream/ from $STACK_SCRIPT backup)"
  dir=$(cd "$dir" && pwd)
  shape=$(cat "$dir/stack" 2>/dev/null || echo "$HERALD_STACK")
  [[ $shape == "$HERALD_STACK" ]] ||
    die "$dir is a backup of the $shape stack: restore it there (its streams' replicas are that stack's)"
  say 'stopping the Herald services (NATS and Postgres stay up)'
  stack_compose stop "${STACK_SERVICES[@]}" >/dev/null 2>&1 || true
  stack_compose up -d --wait --wait-timeout "$HERALD_COMPOSE_WAIT_S" "${STACK_NATS_SERVICES[@]}" postgres
  stack_nats_ready
  say "Postgres: restoring $dir/postgres.dump"
  stack_compose exec -T postgres pg_restore -U herald -d herald --clean --if-exists --no-owner \
    --single-transaction <"$dir/postgres.dump" || die 'pg_restore failed (output above)'
  say "JetStream: restoring the streams of $dir/jetstream/"
  stack_streams_restore "$dir"
  say 'starting the Herald services'
  stack_compose up -d --wait --wait-timeout "$HERALD_COMPOSE_WAIT_S"
  say "restored from $dir"
}
