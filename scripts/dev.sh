#!/usr/bin/env bash
# `make dev`: the whole Herald stack on this machine, state under .data/ (kept between runs).
#
#   .data/tls        local CA + localhost certificate (scripts/gen-certs.sh)
#   .data/nats       JetStream store of a private nats-server on 127.0.0.1:$HERALD_NATS_PORT (14222)
#   .data/pg         a private Postgres cluster on 127.0.0.1:$HERALD_PG_PORT (15432), database herald
#   .data/dev.env    DATABASE_URL and NATS_URL, read by the admin CLI and retention's run-once
#   .data/demo.env   the demo account, its Test key and a demo recipient (sourceable)
#   .data/logs       one log per process; .data/run holds their pids
#
# Ctrl-C or SIGTERM stops every service, then nats-server, then Postgres.
# HERALD_HOST=0.0.0.0 exposes the services beyond this machine (default 127.0.0.1).
set -euo pipefail
# shellcheck source=lib/dev-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dev-common.sh"
cd "$ROOT"

HOST=${HERALD_HOST:-127.0.0.1}
TLS=$DATA/tls
DEMO_EMAIL=demo@herald.local
# A stored Test key is reused while it has at least this long to live (Test keys live 4 hours).
KEY_MIN_REMAINING_MS=$((10 * 60 * 1000))
READY_TIMEOUT_S=90

# name:port, in start order. Retention joins when it exists.
SERVICES=(auth:8445 ingress-api:8443 socket-edge:8444)
[[ -f services/retention/src/main.ts ]] && SERVICES+=(retention:8446)
[[ -f services/status/src/main.ts ]] && SERVICES+=(status:8447)
# The dashboard, served by auth on its own origin (DASHBOARD_DIR); built once when missing.
DASHBOARD_DIST="$ROOT/clients/dashboard/dist"

started=()

cleanup() {
  local status=$?
  trap '' INT TERM
  local entry name pid
  # Edges and ingress first (sockets close with 1001, dispatches drain), auth after them.
  for entry in $(printf '%s\n' "${started[@]}" | tac); do
    name=${entry%%:*}
    pid=${entry##*:}
    say "stopping $name"
    stop_pid "$name" "$pid" 20
    rm -f "$RUN/$name.pid"
  done
  if pid=$(recorded_pid nats); then
    say 'stopping nats-server'
    stop_pid nats-server "$pid"
  fi
  rm -f "$RUN/nats.pid"
  pg_stop
  rm -f "$RUN/dev.pid"
  say 'stopped'
  exit "$status"
}

# ---- single instance ------------------------------------------------------------------------
mkdir -p "$DATA" "$RUN" "$LOGS"
# Searchable by the postgres user, whatever the umask.
chmod 755 "$DATA" "$LOGS"
if pid=$(recorded_pid dev) && [[ $pid != "$$" ]]; then
  die "make dev is already running in this checkout (pid $pid): stop it with Ctrl-C in its terminal, or make stop"
fi
# A previous run killed without its trap (kill -9, closed laptop) leaves orphans behind.
"$ROOT/scripts/dev-stop.sh"
echo $$ >"$RUN/dev.pid"
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for entry in "${SERVICES[@]}" "nats:$NATS_PORT" "postgres:$PG_PORT"; do
  port_busy "${entry##*:}" &&
    die "port ${entry##*:} (${entry%%:*}) is already in use on 127.0.0.1: stop what holds it (HERALD_NATS_PORT / HERALD_PG_PORT move NATS and Postgres)"
done

rotate_log() { [[ -f $LOGS/$1.log ]] && mv -f "$LOGS/$1.log" "$LOGS/$1.log.1" || true; }

# ---- TLS --------------------------------------------------------------------------------------
if [[ -s $TLS/ca.crt ]]; then
  "$ROOT/scripts/gen-certs.sh" "$TLS" >/dev/null
else
  "$ROOT/scripts/gen-certs.sh" "$TLS" >&2
fi

# ---- NATS -------------------------------------------------------------------------------------
# shellcheck source=lib/nats-bin.sh
. "$ROOT/scripts/lib/nats-bin.sh"
NATS_BIN=$(nats_server_bin)
[[ -n $NATS_BIN ]] || die "nats-server $(nats_pinned_version) or newer is not installed: run make deps"
say "nats-server $(nats_server_version_of "$NATS_BIN") ($NATS_BIN)"
mkdir -p "$DATA/nats"
rotate_log nats
# setsid: a terminal's Ctrl-C reaches only this script, which then stops each process once, in
# order; the services treat a second signal as "exit now".
setsid "$NATS_BIN" -n herald-dev -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$DATA/nats" >"$LOGS/nats.log" 2>&1 &
echo $! >"$RUN/nats.pid"
for ((i = 0; ; i++)); do
  port_busy "$NATS_PORT" && break
  proc_alive "$(<"$RUN/nats.pid")" || { tail -n 20 "$LOGS/nats.log" >&2; die 'nats-server exited; log above'; }
  ((i < 200)) || die "nats-server is not listening on 127.0.0.1:$NATS_PORT after 20s; see $LOGS/nats.log"
  sleep 0.1
done
NATS_URL=nats://127.0.0.1:$NATS_PORT
say "nats-server (JetStream) on $NATS_URL"

# ---- Postgres ---------------------------------------------------------------------------------
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
# psql_q DATABASE SQL: the unaligned result rows.
psql_q() { "$PG/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$1" -XtAq -v ON_ERROR_STOP=1 -c "$2"; }
if [[ -z $(psql_q postgres "select 1 from pg_database where datname = 'herald'") ]]; then
  psql_q postgres 'create database herald' >/dev/null
fi
DATABASE_URL=postgres://postgres@127.0.0.1:$PG_PORT/herald
say "Postgres on $DATABASE_URL"

printf 'DATABASE_URL=%s\nNATS_URL=%s\n' "$DATABASE_URL" "$NATS_URL" >"$DATA/dev.env"
export DATABASE_URL NATS_URL

admin() { npm run -s admin -- "$@"; }

say 'running migrations'
admin migrate >"$LOGS/migrate.log" 2>&1 || { tail -n 30 "$LOGS/migrate.log" >&2; die 'migrations failed; log above'; }

# ---- Daraja simulator (M-Pesa payments) ------------------------------------------------------
# Payments go to a local stand-in for Safaricom's Daraja (lib/payments/src/simulator) unless
# HERALD_DARAJA=real, when auth takes BILLING_* and MPESA_* from this environment as they are
# (docs/operations.md, "Billing"). The simulator's test phone numbers are listed in README.md.
DARAJA_SIM_PID=''
if [[ ${HERALD_DARAJA:-sim} == sim ]]; then
  DARAJA_SIM_PORT=${HERALD_DARAJA_SIM_PORT:-8450}
  port_busy "$DARAJA_SIM_PORT" &&
    die "port $DARAJA_SIM_PORT (Daraja simulator) is already in use on 127.0.0.1: stop what holds it, or set HERALD_DARAJA_SIM_PORT"
  rotate_log daraja-sim
  env DARAJA_SIM_PORT="$DARAJA_SIM_PORT" DARAJA_SIM_CA_FILE="$TLS/ca.crt" \
    setsid node --conditions=herald-source --import tsx lib/payments/src/simulator/main.ts >"$LOGS/daraja-sim.log" 2>&1 &
  DARAJA_SIM_PID=$!
  echo "$DARAJA_SIM_PID" >"$RUN/daraja-sim.pid"
  # First in, so cleanup (reverse order) stops it after auth.
  started+=("daraja-sim:$DARAJA_SIM_PID")
  for ((i = 0; ; i++)); do
    port_busy "$DARAJA_SIM_PORT" && break
    proc_alive "$DARAJA_SIM_PID" || { tail -n 20 "$LOGS/daraja-sim.log" >&2; die 'the Daraja simulator exited; log above'; }
    ((i < 300)) || die "the Daraja simulator is not listening on 127.0.0.1:$DARAJA_SIM_PORT after 30s; see $LOGS/daraja-sim.log"
    sleep 0.1
  done
  # The simulator's own credentials, and Daraja's public sandbox shortcode and passkey.
  export BILLING_PROVIDER=mpesa BILLING_CALLBACK_URL=https://localhost:8445 \
    MPESA_BASE_URL=http://127.0.0.1:$DARAJA_SIM_PORT MPESA_CONSUMER_KEY=herald-sim-key \
    MPESA_CONSUMER_SECRET=herald-sim-secret MPESA_SHORTCODE=174379 \
    MPESA_PASSKEY=bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919
  # The admin CLI's `billing checkout` reads them from dev.env, as it does DATABASE_URL.
  for name in BILLING_PROVIDER BILLING_CALLBACK_URL MPESA_BASE_URL MPESA_CONSUMER_KEY \
    MPESA_CONSUMER_SECRET MPESA_SHORTCODE MPESA_PASSKEY; do
    printf '%s=%s\n' "$name" "${!name}" >>"$DATA/dev.env"
  done
  say "Daraja simulator on http://127.0.0.1:$DARAJA_SIM_PORT (M-Pesa payments; test numbers in README.md)"
fi

# ---- services ---------------------------------------------------------------------------------
if [[ -f clients/dashboard/package.json && ! -f $DASHBOARD_DIST/index.html ]]; then
  say 'building the dashboard (clients/dashboard, once)'
  { npm run -s build -w @herald/sdk && npm run -s build -w @herald/dashboard; } >"$LOGS/dashboard-build.log" 2>&1 ||
    say "the dashboard did not build (see $LOGS/dashboard-build.log): the account API still runs"
fi
for entry in "${SERVICES[@]}"; do
  name=${entry%%:*}
  port=${entry##*:}
  rotate_log "$name"
  env PORT="$port" HOST="$HOST" TLS_CERT_FILE="$TLS/tls.crt" TLS_KEY_FILE="$TLS/tls.key" \
    NATS_URL="$NATS_URL" DATABASE_URL="$DATABASE_URL" LOG_LEVEL="${LOG_LEVEL:-info}" \
    DASHBOARD_DIR="$DASHBOARD_DIST" DASHBOARD_INGRESS_URL=https://localhost:8443 DASHBOARD_WS_URL=wss://localhost:8444 \
    setsid node --conditions=herald-source --import tsx "services/$name/src/main.ts" >"$LOGS/$name.log" 2>&1 &
  pid=$!
  echo "$pid" >"$RUN/$name.pid"
  started+=("$name:$pid")
done

for entry in "${started[@]}"; do
  name=${entry%%:*}
  pid=${entry##*:}
  port=$(printf '%s\n' "${SERVICES[@]}" | grep "^$name:" | cut -d: -f2 || true)
  # Not a service with /readyz (the Daraja simulator): its port was awaited when it started.
  [[ -n $port ]] || continue
  for ((i = 0; ; i++)); do
    curl -fsS -o /dev/null --max-time 2 --cacert "$TLS/ca.crt" "https://localhost:$port/readyz" 2>/dev/null && break
    proc_alive "$pid" || { tail -n 30 "$LOGS/$name.log" >&2; die "$name exited during start-up; log above ($LOGS/$name.log)"; }
    ((i < READY_TIMEOUT_S * 4)) || die "$name is not ready on https://localhost:$port/readyz after ${READY_TIMEOUT_S}s; see $LOGS/$name.log"
    sleep 0.25
  done
  say "$name ready on https://localhost:$port"
done

# ---- demo account and Test key ----------------------------------------------------------------
# The admin CLI prints one JSON object on stdout with --json, its errors on stderr.
admin_json() {
  local out
  out=$(admin "$@" --json 2>"$LOGS/admin.log") || {
    sed 's/^/  /' "$LOGS/admin.log" >&2
    return 1
  }
  printf '%s\n' "$out"
}
json_field() { node -e 'const v = JSON.parse(process.argv[1])[process.argv[2]]; if (v == null) process.exit(1); console.log(v)' "$1" "$2"; }

HERALD_ACCOUNT_ID='' HERALD_TEST_KEY='' HERALD_TEST_KEY_ID='' HERALD_TEST_KEY_EXPIRES_AT='' HERALD_RECIPIENT=''
if [[ -f $DATA/demo.env ]]; then
  while IFS='=' read -r k v; do
    case $k in
      HERALD_ACCOUNT_ID | HERALD_TEST_KEY | HERALD_TEST_KEY_ID | HERALD_TEST_KEY_EXPIRES_AT | HERALD_RECIPIENT) printf -v "$k" '%s' "$v" ;;
    esac
  done <"$DATA/demo.env"
fi

keys=''
if [[ -n $HERALD_ACCOUNT_ID ]] && ! keys=$(admin_json key list --account "$HERALD_ACCOUNT_ID" 2>/dev/null); then
  say "the stored demo account $HERALD_ACCOUNT_ID is gone from the database: making a new one"
  HERALD_ACCOUNT_ID=''
fi
if [[ -z $HERALD_ACCOUNT_ID ]]; then
  say "creating the demo account ($DEMO_EMAIL)"
  if out=$(admin_json account create --email "$DEMO_EMAIL" 2>/dev/null); then
    HERALD_ACCOUNT_ID=$(json_field "$out" id) || die "admin account create printed no id: $out"
  else
    # The database outlived .data/demo.env: the address is taken by the demo account made then.
    # The admin CLI has no lookup by email, hence this one read of auth's table.
    HERALD_ACCOUNT_ID=$(psql_q herald "select id from accounts where email = '$DEMO_EMAIL'" 2>/dev/null || true)
    [[ -n $HERALD_ACCOUNT_ID ]] || { sed 's/^/  /' "$LOGS/admin.log" >&2; die 'admin account create failed; its message is above'; }
  fi
  HERALD_TEST_KEY='' HERALD_TEST_KEY_ID=''
fi
[[ -n $HERALD_RECIPIENT ]] || HERALD_RECIPIENT=$(node -e 'console.log(crypto.randomUUID())')

# Reuse the stored Test key while the database says it is neither revoked nor about to expire.
key_usable() {
  [[ -n $HERALD_TEST_KEY && -n $HERALD_TEST_KEY_ID && -n $keys ]] || return 1
  node -e '
    const [keys, id, margin] = process.argv.slice(1);
    const k = JSON.parse(keys).keys.find((k) => k.id === id);
    const ok = k && !k.revoked_at && (k.expires_at === null || Date.parse(k.expires_at) - Date.now() > Number(margin));
    process.exit(ok ? 0 : 1);
  ' "$keys" "$HERALD_TEST_KEY_ID" "$KEY_MIN_REMAINING_MS"
}
if ! key_usable; then
  # One Test key per account, ever: a new account gets one; after that, support's reset-test
  # (which revokes the old value) is the only way to a fresh 4-hour key.
  if [[ -n $keys ]] && node -e 'process.exit(JSON.parse(process.argv[1]).keys.some((k) => k.kind === "test") ? 0 : 1)' "$keys"; then
    say 'resetting the demo account Test key (the stored one expired or was revoked)'
    out=$(admin_json key reset-test --account "$HERALD_ACCOUNT_ID") ||
      die 'admin key reset-test failed; its message is above'
  else
    say 'creating a Test key for the demo account'
    out=$(admin_json key create --account "$HERALD_ACCOUNT_ID" --kind test --client mobile) ||
      die 'admin key create failed; its message is above'
  fi
  HERALD_TEST_KEY=$(json_field "$out" key) || die "admin key create printed no key: $out"
  HERALD_TEST_KEY_ID=$(json_field "$out" id) || die "admin key create printed no id: $out"
  HERALD_TEST_KEY_EXPIRES_AT=$(json_field "$out" expires_at) || die "admin key create printed no expires_at: $out"
fi

BASE_URL=https://localhost:8443
WS_URL=wss://localhost:8444
(
  umask 077
  cat >"$DATA/demo.env" <<EOF
HERALD_BASE_URL=$BASE_URL
HERALD_WS_URL=$WS_URL
HERALD_ACCOUNT_ID=$HERALD_ACCOUNT_ID
HERALD_TEST_KEY=$HERALD_TEST_KEY
HERALD_TEST_KEY_ID=$HERALD_TEST_KEY_ID
HERALD_TEST_KEY_EXPIRES_AT=$HERALD_TEST_KEY_EXPIRES_AT
HERALD_RECIPIENT=$HERALD_RECIPIENT
EOF
)

connect_url="$WS_URL/ws/connect?api_key=$HERALD_TEST_KEY&recipient=$HERALD_RECIPIENT&client=mobile"
body="{\"recipient\":\"$HERALD_RECIPIENT\",\"payload\":{\"hello\":\"world\"},\"api_key\":\"$HERALD_TEST_KEY\",\"client\":\"mobile\"}"

cat <<EOF

Herald is running. Ctrl-C stops it; logs are in .data/logs/.

HERALD_BASE_URL=$BASE_URL
HERALD_WS_URL=$WS_URL
HERALD_TEST_KEY=$HERALD_TEST_KEY
HERALD_ACCOUNT_ID=$HERALD_ACCOUNT_ID
HERALD_DASHBOARD_URL=https://localhost:8445/

The dashboard (sign up, keys, plan, delivery status, debug console) is at HERALD_DASHBOARD_URL once
the browser trusts .data/tls/ca.crt. There is no mail server: a password reset token comes from
  npm run -s admin -- account reset-token --email you@example.com

The Test key expires at $HERALD_TEST_KEY_EXPIRES_AT (make dev issues a new one then).
Paste the four lines above into a shell (or: . .data/demo.env), then

Send an event to recipient $HERALD_RECIPIENT (202 while it is offline: queued; 200 once connected):
  curl --cacert .data/tls/ca.crt -H 'content-type: application/json' -d '$body' \$HERALD_BASE_URL/notify

Receive events (queued ones arrive on connect, then live ones):
  NODE_EXTRA_CA_CERTS=.data/tls/ca.crt node -e "new (require('ws'))(process.argv[1]).on('message', (m) => console.log(String(m)))" '$connect_url'

Or in the devtools console of any https page, once the browser trusts .data/tls/ca.crt:
  const ws = new WebSocket('$connect_url'); ws.onmessage = (e) => console.log(JSON.parse(e.data));

Or with the SDK (@herald/sdk; in Node: NODE_EXTRA_CA_CERTS=.data/tls/ca.crt, and ws on Node 20/21).
Both URLs are needed: notify goes to ingress-api, sockets to socket-edge:
  import { Herald } from '@herald/sdk';
  const herald = new Herald({ apiKey: '$HERALD_TEST_KEY', client: 'mobile', baseUrl: '$BASE_URL', wsUrl: '$WS_URL' });
  herald.onError((error) => console.error(error.kind, error.code, error.message));
  herald.onConnectionChange((state) => console.log(state));
  herald.subscribe('$HERALD_RECIPIENT').listen((payload) => console.log(payload));

EOF

# Run until a signal, or until a service dies (then stop everything: a half stack misleads).
while :; do
  for entry in "${started[@]}"; do
    name=${entry%%:*}
    pid=${entry##*:}
    if ! proc_alive "$pid"; then
      tail -n 30 "$LOGS/$name.log" >&2
      die "$name exited unexpectedly; log above ($LOGS/$name.log). Stopping the stack."
    fi
  done
  proc_alive "$(<"$RUN/nats.pid")" || die "nats-server exited unexpectedly; see $LOGS/nats.log. Stopping the stack."
  sleep 1 &
  wait $! || true
done
