#!/usr/bin/env bash
# `make dev`: the whole Herald stack on this machine, state under .data/ (kept between runs).
#
#   .data/tls        local CA + localhost certificate (scripts/gen-certs.sh)
#   .data/nats       JetStream store of a private nats-server on 127.0.0.1:$HERALD_NATS_PORT (14222)
#   .data/pg         a private Postgres cluster on 127.0.0.1:$HERALD_PG_PORT (15432), database herald
#   .data/dev.env    DATABASE_URL, NATS_URL, the operator's NATS login and SECRET_ENCRYPTION_KEY, read by the admin CLI and retention's run-once
#   .data/secret-encryption.key  seals keys' signing secrets at rest (made once: keep it with the data)
#   .data/webhook-secret.key     seals webhook endpoints' secrets at rest (status; made once, likewise)
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
# shellcheck source=lib/dev-stores.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dev-stores.sh"
# shellcheck source=lib/dev-welcome.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dev-welcome.sh"
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
FCM_SIM_PORT=${HERALD_FCM_SIM_PORT:-8451}
APNS_SIM_PORT=${HERALD_APNS_SIM_PORT:-8452}
[[ ${HERALD_PUSH:-sim} == sim ]] && PORTS+=("FCM simulator:$FCM_SIM_PORT" "APNs simulator:$APNS_SIM_PORT")
# Who listens on a port, when ss can tell (root sees every process; others see their own).
port_holder() {
  local users
  users=$(ss -ltnpH "sport = :$1" 2>/dev/null | grep -o 'users:(([^)]*))' | head -n 1) || return 0
  [[ $users =~ \(\(\"([^\"]*)\",pid=([0-9]+) ]] && printf ' by pid %s (%s)' "${BASH_REMATCH[2]}" "${BASH_REMATCH[1]}"
  return 0
}
for entry in "${PORTS[@]}"; do
  port_busy "${entry##*:}" &&
    die "port ${entry##*:} (${entry%:*}) is already in use on 127.0.0.1$(port_holder "${entry##*:}"): stop what holds it (make stop, if it is a make dev of this checkout; HERALD_NATS_PORT / HERALD_PG_PORT / HERALD_DARAJA_SIM_PORT / HERALD_FCM_SIM_PORT / HERALD_APNS_SIM_PORT move NATS, Postgres and the simulators)"
done

rotate_log() { [[ -f $LOGS/$1.log ]] && mv -f "$LOGS/$1.log" "$LOGS/$1.log.1" || true; }

# ---- TLS --------------------------------------------------------------------------------------
if [[ -s $TLS/ca.crt ]]; then
  "$ROOT/scripts/gen-certs.sh" "$TLS" >/dev/null
else
  "$ROOT/scripts/gen-certs.sh" "$TLS" >&2
fi

# ---- NATS -------------------------------------------------------------------------------------
start_nats

# ---- Postgres ---------------------------------------------------------------------------------
start_postgres

# Seals keys' signing secrets at rest (auth and the admin CLI): made once and kept with the data,
# since a new one could not open the secrets sealed before.
if [[ ! -s $DATA/secret-encryption.key ]]; then
  (umask 077 && openssl rand -base64 32 >"$DATA/secret-encryption.key")
fi
SECRET_ENCRYPTION_KEY=$(<"$DATA/secret-encryption.key")
# Seals webhook endpoints' secrets at rest (the status service alone), kept for the same reason.
if [[ ! -s $DATA/webhook-secret.key ]]; then
  (umask 077 && openssl rand -base64 32 >"$DATA/webhook-secret.key")
fi
WEBHOOK_SECRET_KEY=$(<"$DATA/webhook-secret.key")
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

# ---- FCM and APNs simulators (push to native apps) --------------------------------------------
# Pushes to FCM and APNs go to local stand-ins (lib/testkit's FcmSimulator and ApnsSimulator, which
# verify the JWTs and log every push) unless HERALD_PUSH=real, when the status service takes
# FCM_ORIGIN, FCM_TOKEN_URI, APNS_ORIGIN and APNS_SANDBOX_ORIGIN from this environment as they
# are (unset: the real services). Their credentials are kept in $DATA/push-sim.
PUSH_SIM_ENV=()
if [[ ${HERALD_PUSH:-sim} == sim ]]; then
  rotate_log push-sims
  env FCM_SIM_PORT="$FCM_SIM_PORT" APNS_SIM_PORT="$APNS_SIM_PORT" PUSH_SIM_DIR="$DATA/push-sim" \
    APNS_SIM_TLS_CERT_FILE="$TLS/tls.crt" APNS_SIM_TLS_KEY_FILE="$TLS/tls.key" \
    setsid node --conditions=herald-source --import tsx lib/testkit/src/push-sims-main.ts >"$LOGS/push-sims.log" 2>&1 &
  PUSH_SIMS_PID=$!
  echo "$PUSH_SIMS_PID" >"$RUN/push-sims.pid"
  started+=("push-sims:$PUSH_SIMS_PID")
  for ((i = 0; ; i++)); do
    port_busy "$FCM_SIM_PORT" && port_busy "$APNS_SIM_PORT" && break
    proc_alive "$PUSH_SIMS_PID" || { tail -n 20 "$LOGS/push-sims.log" >&2; die 'the FCM/APNs simulators exited; log above'; }
    ((i < 300)) || die "the FCM/APNs simulators are not listening on 127.0.0.1:$FCM_SIM_PORT/$APNS_SIM_PORT after 30s; see $LOGS/push-sims.log"
    sleep 0.1
  done
  PUSH_SIM_ENV=(FCM_ORIGIN="http://127.0.0.1:$FCM_SIM_PORT" FCM_TOKEN_URI="http://127.0.0.1:$FCM_SIM_PORT/token"
    APNS_ORIGIN="https://localhost:$APNS_SIM_PORT" APNS_SANDBOX_ORIGIN="https://localhost:$APNS_SIM_PORT" PUSH_CA_FILE="$TLS/ca.crt")
  say "no real FCM/APNs credentials (HERALD_PUSH=real uses them): FCM simulator on http://127.0.0.1:$FCM_SIM_PORT, APNs simulator on https://localhost:$APNS_SIM_PORT; FCM_ORIGIN, FCM_TOKEN_URI, APNS_ORIGIN point at them"
  say "  configure an account with them: npm run -s admin -- push configure --account ID --fcm-service-account $DATA/push-sim/fcm-service-account.json --apns-key $DATA/push-sim/apns-key.p8 --apns-key-id $(node -p "require('$DATA/push-sim/apns-key.json').key_id") --apns-team-id HERALDDEV1 --apns-topic com.example.app; pushes are logged in $LOGS/push-sims.log"
fi

# ---- services ---------------------------------------------------------------------------------
if [[ -f clients/dashboard/package.json && ! -f $DASHBOARD_DIST/index.html ]]; then
  say 'building the dashboard (clients/dashboard, once)'
  { npm run -s build -w @herald/sdk && npm run -s build -w @herald/dashboard; } >"$LOGS/dashboard-build.log" 2>&1 ||
    say "the dashboard did not build (see $LOGS/dashboard-build.log): the account API still runs"
fi
# Webhooks go to a receiver on this machine (http://127.0.0.1:…, or a private address) only with
# WEBHOOK_ALLOW_PRIVATE=true: right for a local receiver, never for production, where it would
# let any account's endpoint reach the operator's internal network (docs/security.md).
say 'webhooks: WEBHOOK_ALLOW_PRIVATE=true (loopback, private addresses and http:// allowed, for a local receiver; production must not set it)'
# The same for pushes: a local push service (a test one, or web-push-testing) stands in for the
# browsers' push services, which this machine may not reach.
say 'push: PUSH_ALLOW_PRIVATE=true (the same, for a local push service)'
for entry in "${SERVICES[@]}"; do
  name=${entry%%:*}
  port=${entry##*:}
  rotate_log "$name"
  # Each service as its own NATS user; only auth holds the callout's seed, only status the
  # webhook key.
  own=()
  [[ $name == auth ]] && own=(NATS_CALLOUT_SEED="$NATS_CALLOUT_SEED")
  [[ $name == status ]] && own=(WEBHOOK_SECRET_KEY="$WEBHOOK_SECRET_KEY" WEBHOOK_ALLOW_PRIVATE=true PUSH_ALLOW_PRIVATE=true "${PUSH_SIM_ENV[@]}")
  env PORT="$port" HOST="$HOST" TLS_CERT_FILE="$TLS/tls.crt" TLS_KEY_FILE="$TLS/tls.key" \
    NATS_URL="$NATS_URL" NATS_USER="herald-$name" NATS_PASSWORD="$(nats_password "$name")" "${own[@]}" \
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
  # Not a service with /readyz (the Daraja, FCM and APNs simulators): its port was awaited when it started.
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

print_welcome

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
