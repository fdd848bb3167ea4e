# Shared by scripts/dev.sh and scripts/dev-stop.sh: where `make dev` keeps its state, and how it
# finds, runs and stops its processes. Sourced, never executed.
#
# Functions end with an explicit `return 0`: a bare `return` inside an EXIT trap (where cleanup
# calls them) returns the status that fired the trap, not the last command's.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DATA=$ROOT/.data
RUN=$DATA/run
LOGS=$DATA/logs
PGDATA=$DATA/pg
# Postgres's unix socket lives here rather than /var/run/postgresql, so the dev cluster never
# collides with a system one.
PGSOCK=$DATA/pg-socket
NATS_PORT=${HERALD_NATS_PORT:-14222}
PG_PORT=${HERALD_PG_PORT:-15432}

say() { printf 'dev: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

is_root() { [[ $(id -u) -eq 0 ]]; }

# Postgres refuses to run as root: as root, every Postgres command runs as the `postgres` user.
as_pg() {
  if is_root; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# The directory holding initdb, pg_ctl and psql of one installation. Debian keeps them under
# /usr/lib/postgresql/<major>/bin; elsewhere they are on PATH. An existing cluster pins the major
# version it was created with.
pg_bin() {
  local want='' dir
  [[ -f $PGDATA/PG_VERSION ]] && want=$(<"$PGDATA/PG_VERSION")
  if [[ -n $want && -x /usr/lib/postgresql/$want/bin/pg_ctl ]]; then
    echo "/usr/lib/postgresql/$want/bin"
    return 0
  fi
  dir=$(compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' | sort -V | tail -n 1 || true)
  if [[ -n $dir ]]; then
    dirname "$dir"
  elif command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
  else
    return 1
  fi
}

pg_running() {
  local bin=$1
  [[ -f $PGDATA/postmaster.pid ]] && as_pg "$bin/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1
}

pg_stop() {
  local bin
  [[ -f $PGDATA/postmaster.pid ]] || return 0
  bin=$(pg_bin) || return 0
  pg_running "$bin" || return 0
  say 'stopping Postgres'
  as_pg "$bin/pg_ctl" -D "$PGDATA" -m fast -w -t 30 stop >/dev/null ||
    say 'pg_ctl stop failed; see .data/logs/postgres.log'
}

# A zombie still answers kill -0, so read the state from /proc where there is one.
proc_alive() {
  local pid=$1 stat
  kill -0 "$pid" 2>/dev/null || return 1
  [[ -r /proc/$pid/stat ]] || return 0
  stat=$(<"/proc/$pid/stat")
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}

# The word the command line of each process `make dev` records in .data/run/<name>.pid contains.
# It must match what dev.sh (or example.sh) launches: a wrong one leaves that process running
# after `make stop` (test/dev/dev-stop.test.ts kills make dev with -9 and finds none left).
signature_of() {
  case $1 in
    dev) echo 'dev.sh' ;;
    nats) echo 'nats-server' ;;
    daraja-sim) echo 'lib/payments/src/simulator/main.ts' ;;
    push-sims) echo 'lib/testkit/src/push-sims-main.ts' ;;
    example) echo 'clients/react/example/serve.ts' ;;
    *) echo "services/$1/src/main.ts" ;;
  esac
}

# The pid recorded for name, only while that process is alive and still the one recorded (a pid
# file can outlive its process, and the pid be reused by someone else's).
recorded_pid() {
  local name=$1 file=$RUN/$1.pid pid cmdline
  [[ -f $file ]] || return 1
  pid=$(<"$file")
  [[ $pid =~ ^[0-9]+$ ]] && proc_alive "$pid" || return 1
  if [[ -r /proc/$pid/cmdline ]]; then
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline")
    [[ $cmdline == *"$(signature_of "$name")"* ]] || return 1
  fi
  echo "$pid"
}

# SIGTERM, then SIGKILL after timeout_s. Reaps the process when it is our child.
stop_pid() {
  local name=$1 pid=$2 timeout_s=${3:-15} ticks=0
  proc_alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  while proc_alive "$pid"; do
    if ((ticks >= timeout_s * 10)); then
      say "$name (pid $pid) did not stop within ${timeout_s}s: killing it"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.1
    ticks=$((ticks + 1))
  done
  wait "$pid" 2>/dev/null || true
}
