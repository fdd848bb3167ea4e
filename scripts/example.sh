#!/usr/bin/env bash
# `make example`: the React bell example (clients/react/example) against the `make dev` stack of
# this checkout, served over https with make dev's certificate at https://localhost:5173.
#
# It builds what the page imports (@herald/sdk and @herald/react, into their dist/), gives the page
# a web Test key for its own origin from the second demo account make dev made (so the demo
# account's one Test key is never spent on it; the key is reused while valid, reset after), and
# prints the URL to open and the curl that sends the page's user an event. Ctrl-C stops it; so
# does `make stop`, and the end of `make dev`.
set -euo pipefail
# shellcheck source=lib/dev-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dev-common.sh"
# shellcheck source=lib/dev-accounts.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dev-accounts.sh"
say() { printf 'example: %s\n' "$*" >&2; }
cd "$ROOT"

PORT=5173
ORIGIN=https://localhost:$PORT
BASE_URL=https://localhost:8443
WS_URL=wss://localhost:8444

recorded_pid dev >/dev/null && [[ -f $DATA/dev.env && -f $DATA/example.env ]] ||
  die 'make dev is not running in this checkout: start it in another terminal (make dev), wait for "Herald is running", then run make example'
if pid=$(recorded_pid example); then
  die "the bell example is already running (pid $pid) on $ORIGIN: stop it with Ctrl-C in its terminal, or make stop"
fi
set -a
# shellcheck source=/dev/null
. "$DATA/dev.env"
set +a

HERALD_EXAMPLE_ACCOUNT_ID='' HERALD_EXAMPLE_KEY='' HERALD_EXAMPLE_KEY_ID='' HERALD_EXAMPLE_USER=''
load_env "$DATA/example.env" HERALD_EXAMPLE_ACCOUNT_ID HERALD_EXAMPLE_KEY HERALD_EXAMPLE_KEY_ID HERALD_EXAMPLE_USER
[[ -n $HERALD_EXAMPLE_ACCOUNT_ID ]] || die "$DATA/example.env names no account: restart make dev, which makes it"
ACCOUNT_KEYS=''
ensure_test_key "$HERALD_EXAMPLE_ACCOUNT_ID" web "$ORIGIN" "$HERALD_EXAMPLE_KEY" "$HERALD_EXAMPLE_KEY_ID"
[[ -n $HERALD_EXAMPLE_USER ]] || HERALD_EXAMPLE_USER=$(node -e 'console.log(crypto.randomUUID())')
(
  umask 077
  cat >"$DATA/example.env" <<EOF
HERALD_EXAMPLE_ACCOUNT_ID=$HERALD_EXAMPLE_ACCOUNT_ID
HERALD_EXAMPLE_KEY=$TEST_KEY
HERALD_EXAMPLE_KEY_ID=$TEST_KEY_ID
HERALD_EXAMPLE_KEY_EXPIRES_AT=$TEST_KEY_EXPIRES_AT
HERALD_EXAMPLE_USER=$HERALD_EXAMPLE_USER
EOF
)

say 'building @herald/sdk and @herald/react (their dist/, which the example imports)'
{ npm run -s build -w @herald/sdk && npm run -s build -w @herald/react; } >"$LOGS/example-build.log" 2>&1 ||
  { tail -n 30 "$LOGS/example-build.log" >&2; die 'the build failed; log above'; }

# The server prints the URL and the curl once it listens (clients/react/example/serve.ts).
env HERALD_EXAMPLE_PORT="$PORT" HERALD_EXAMPLE_ORIGIN="$ORIGIN" \
  HERALD_EXAMPLE_TLS_CERT="$DATA/tls/tls.crt" HERALD_EXAMPLE_TLS_KEY="$DATA/tls/tls.key" \
  HERALD_EXAMPLE_CA="${DATA#"$ROOT"/}/tls/ca.crt" HERALD_EXAMPLE_KEY="$TEST_KEY" \
  HERALD_EXAMPLE_KEY_EXPIRES_AT="$TEST_KEY_EXPIRES_AT" HERALD_EXAMPLE_USER="$HERALD_EXAMPLE_USER" \
  HERALD_BASE_URL="$BASE_URL" HERALD_WS_URL="$WS_URL" \
  node --import tsx clients/react/example/serve.ts &
pid=$!
echo "$pid" >"$RUN/example.pid"
trap 'kill -TERM "$pid" 2>/dev/null || true' INT TERM
status=0
wait "$pid" || status=$?
# A signal first interrupts the wait: wait again for the server to finish closing.
while proc_alive "$pid"; do wait "$pid" || status=$?; done
rm -f "$RUN/example.pid"
# Stopped by Ctrl-C (130) or make stop / the end of make dev (143): what stopping it means.
case $status in 130 | 143) status=0 ;; esac
exit "$status"
