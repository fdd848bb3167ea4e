#!/usr/bin/env bash
# Stops what `make dev` started in this checkout, without asking: the dev.sh process itself if it
# is still running (its trap then stops the rest), else whatever it left behind (services,
# nats-server, Postgres) after being killed. Only processes recorded in .data/run are touched.
set -euo pipefail
# shellcheck source=lib/dev-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dev-common.sh"

[[ -d $DATA ]] || exit 0

if pid=$(recorded_pid dev); then
  say "stopping make dev (pid $pid)"
  # dev.sh stops services, NATS and Postgres itself; give it their combined shutdown time.
  stop_pid 'make dev' "$pid" 60
fi

stop_recorded() {
  local name=$1 pid
  if pid=$(recorded_pid "$name"); then
    say "stopping $name (pid $pid)"
    stop_pid "$name" "$pid"
  fi
  rm -f "$RUN/$name.pid"
}

# Edges and ingress before auth, as dev.sh does; NATS and Postgres last.
for file in "$RUN"/*.pid; do
  [[ -e $file ]] || continue
  name=$(basename "$file" .pid)
  [[ $name == nats || $name == dev || $name == auth ]] || stop_recorded "$name"
done
stop_recorded auth

stop_recorded nats
rm -f "$RUN/dev.pid"

pg_stop
