#!/usr/bin/env bash
# `make dev`: the whole Herald stack on this machine, state under .data/ (kept between runs).
#
#   .data/tls        local CA + localhost certificate (scripts/gen-certs.sh)
#   .data/nats       JetStream store of a private nats-server on 127.0.0.1:$HERALD_NATS_PORT (14222)
#   .data/pg         a private Postgres cluster on 127.0.0.1:$HERALD_PG_PORT (15432), database herald
#   .data/dev.env    DATABASE_URL, NATS_URL, the operator's NATS login and SECRET_ENCRYPTION_KEY, read by the admin CLI and retention's run-once
#   .data/secret-encryption.key  seals keys' signing secrets at rest (made once: keep it with the data)
#   .data/demo.env   the demo account, its Test key and a demo recipient (sourceable)
#   .data/example.env  the bell example's own account; make example adds its key (scripts/example.sh)
#   .data/logs       one log per process; .data/run holds their pids
#
# Ctrl-C or SIGTERM stops every service, then nats-server, then Postgres.
# HERALD_HOST=0.0.0.0 exposes the services beyond this machine (default 127.0.0.1).
set -euo pipefail
# shellcheck source=lib/dev-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dev-common.sh"
# shellcheck source=lib/dev-accounts.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dev-accounts.sh"
cd "$ROOT"

HOST=${HERALD_HOST:-127.0.0.1}
TLS=$DATA/tls
DEMO_EMAIL=demo@herald.local
EXAMPLE_EMAIL=example@herald.local
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
  # The bell example (make example, another terminal) has nothing to talk to any more.
  if pid=$(recorded_pid example); then
    say 'stopping the bell example'
    stop_pid example "$pid"
  fi
  rm -f "$RUN/example.pid"
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
# Every port before anything starts: a busy one found later would leave NATS and Postgres behind.
DARAJA_SIM_PORT=${HERALD_DARAJA_SIM_PORT:-8450}
PORTS=("${SERVICES[@]}" "nats:$NATS_PORT" "postgres:$PG_PORT")
[[ ${HERALD_DARAJA:-sim} == sim ]] && PORTS+=("Daraja simulator:$DARAJA_SIM_PORT")
# Who listens on a port, when ss can tell (root sees every process; others see their own).
port_holder() {
  local users
  users=$(ss -ltnpH "sport = :$1" 2>/dev/null | grep -o 'users:(([^)]*))' | head -n 1) || return 0
  [[ $users =~ \(\(\"([^\"]*)\",pid=([0-9]+) ]] && printf ' by pid %s (%s)' "${BASH_REMATCH[2]}" "${BASH_REMATCH[1]}"
  return 0
}
for entry in "${PORTS[@]}"; do
  port_busy "${entry##*:}" &&
    die "port ${entry##*:} (${entry%:*}) is already in use on 127.0.0.1$(port_holder "${entry##*:}"): stop what holds it (make stop, if it is a make dev of this checkout; HERALD_NATS_PORT / HERALD_PG_PORT / HERALD_DARAJA_SIM_PORT move NATS, Postgres and the Daraja simulator)"
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
# Authentication as deployed: deploy/nats/users.conf (one user per service, the auth callout for
# backends), its passwords and callout key in .data/nats-auth.env.
# shellcheck source=lib/nats-auth.sh
. "$ROOT/scripts/lib/nats-auth.sh"
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

# Seals keys' signing secrets at rest (auth and the admin CLI): made once and kept with the data,
# since a new one could not open the secrets sealed before.
if [[ ! -s $DATA/secret-encryption.key ]]; then
  (umask 077 && openssl rand -base64 32 >"$DATA/secret-encryption.key")
fi
SECRET_ENCRYPTION_KEY=$(<"$DATA/secret-encryption.key")
# The admin CLI and retention's run-once log in as the operator (herald-admin).
(
  umask 077
  printf 'DATABASE_URL=%s\nNATS_URL=%s\nNATS_USER=herald-admin\nNATS_PASSWORD=%s\nSECRET_ENCRYPTION_KEY=%s\n' \
    "$DATABASE_URL" "$NATS_URL" "$(nats_password admin)" "$SECRET_ENCRYPTION_KEY" >"$DATA/dev.env"
)
export DATABASE_URL NATS_URL SECRET_ENCRYPTION_KEY

say 'running migrations'
admin migrate >"$LOGS/migrate.log" 2>&1 || { tail -n 30 "$LOGS/migrate.log" >&2; die 'migrations failed; log above'; }

# ---- Daraja simulator (M-Pesa payments) ------------------------------------------------------
# Payments go to a local stand-in for Safaricom's Daraja (lib/payments/src/simulator) unless
# HERALD_DARAJA=real, when auth takes BILLING_* and MPESA_* from this environment as they are
# (docs/operations.md, "Billing"). The simulator's test phone numbers are listed in README.md.
DARAJA_SIM_PID=''
if [[ ${HERALD_DARAJA:-sim} == sim ]]; then
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
  # Each service as its own NATS user; only auth holds the callout's seed.
  callout=()
  [[ $name == auth ]] && callout=(NATS_CALLOUT_SEED="$NATS_CALLOUT_SEED")
  env PORT="$port" HOST="$HOST" TLS_CERT_FILE="$TLS/tls.crt" TLS_KEY_FILE="$TLS/tls.key" \
    NATS_URL="$NATS_URL" NATS_USER="herald-$name" NATS_PASSWORD="$(nats_password "$name")" "${callout[@]}" \
    DATABASE_URL="$DATABASE_URL" LOG_LEVEL="${LOG_LEVEL:-info}" SECRET_ENCRYPTION_KEY="$SECRET_ENCRYPTION_KEY" \
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

# ---- demo accounts and Test keys --------------------------------------------------------------
HERALD_ACCOUNT_ID='' HERALD_TEST_KEY='' HERALD_TEST_KEY_ID='' HERALD_RECIPIENT=''
load_env "$DATA/demo.env" HERALD_ACCOUNT_ID HERALD_TEST_KEY HERALD_TEST_KEY_ID HERALD_RECIPIENT
ensure_account "$DEMO_EMAIL" "$HERALD_ACCOUNT_ID"
if [[ $ACCOUNT_ID != "$HERALD_ACCOUNT_ID" ]]; then
  HERALD_ACCOUNT_ID=$ACCOUNT_ID HERALD_TEST_KEY='' HERALD_TEST_KEY_ID=''
fi
[[ -n $HERALD_RECIPIENT ]] || HERALD_RECIPIENT=$(node -e 'console.log(crypto.randomUUID())')
ensure_test_key "$HERALD_ACCOUNT_ID" mobile '' "$HERALD_TEST_KEY" "$HERALD_TEST_KEY_ID"
HERALD_TEST_KEY=$TEST_KEY HERALD_TEST_KEY_ID=$TEST_KEY_ID HERALD_TEST_KEY_EXPIRES_AT=$TEST_KEY_EXPIRES_AT

# A second account for the React bell example (make example), which needs a web key for its own
# origin: this one's single Test key then never has to be spent on it. make example issues the key.
HERALD_EXAMPLE_ACCOUNT_ID=''
load_env "$DATA/example.env" HERALD_EXAMPLE_ACCOUNT_ID
ensure_account "$EXAMPLE_EMAIL" "$HERALD_EXAMPLE_ACCOUNT_ID"
if [[ $ACCOUNT_ID != "$HERALD_EXAMPLE_ACCOUNT_ID" ]]; then
  printf 'HERALD_EXAMPLE_ACCOUNT_ID=%s\n' "$ACCOUNT_ID" >"$DATA/example.env"
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
HERALD_NATS_URL=$NATS_URL

The dashboard (sign up, keys, plan, delivery status, debug console) is at HERALD_DASHBOARD_URL once
the browser trusts .data/tls/ca.crt. There is no mail server: a password reset token comes from
  npm run -s admin -- account reset-token --email you@example.com

A backend that dispatches over NATS (request rt.dispatch.<account>) at HERALD_NATS_URL logs in
with a NATS user of its account's own, allowed nothing else (its password is shown once):
  npm run -s admin -- nats-user create --account $HERALD_ACCOUNT_ID

The Test key expires at $HERALD_TEST_KEY_EXPIRES_AT (make dev issues a new one then).

The React notification bell, live in a page of its own: run make example in another terminal
(clients/react/example/README.md). It has an account of its own, $EXAMPLE_EMAIL.
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
