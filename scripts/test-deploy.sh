#!/usr/bin/env bash
# `make test-deploy`: the docker compose stack as real containers, from this checkout, through the
# same compose file and scripts as `make compose-up` (test/deploy/compose.deploy.ts lists what it
# checks). It runs as its own compose project on free ports of 127.0.0.1, so it never meets
# `make dev` or another stack, and then removes what it created: the stack, its volumes, the
# images it built (Herald's, and any base-image stand-in it had to make) and the dockerd it
# started. The compose plugin, once built, stays installed.
#
#   HERALD_DEPLOY_TEST_KEEP_IMAGES=1   keep the built images (faster reruns while working on it)
#   HERALD_DEPLOY_TEST_TIMEOUT_S       the whole run's bound (2400 s); past it the run fails
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

say() { printf 'test-deploy: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

if [[ -z ${HERALD_DEPLOY_TEST_CHILD:-} ]]; then
  # The bound: the whole run, cleanup included, in its own process group that timeout ends.
  export HERALD_DEPLOY_TEST_CHILD=1
  exec timeout --kill-after=120 "${HERALD_DEPLOY_TEST_TIMEOUT_S:-2400}" "$0" "$@"
fi

run_id=$(date +%s)-$$
export HERALD_COMPOSE_PROJECT=herald-deploy-test-$run_id
export HERALD_DEPLOY_DIR=$ROOT/.data/deploy-test/$run_id
export HERALD_DOCKER_STATE=$HERALD_DEPLOY_DIR/docker
export HERALD_IMAGE=herald-deploy-test:$run_id
mkdir -p "$HERALD_DOCKER_STATE"

# shellcheck source=lib/docker.sh
. "$ROOT/scripts/lib/docker.sh"
# shellcheck source=lib/compose-stack.sh
. "$ROOT/scripts/lib/compose-stack.sh"

# Three free ports on 127.0.0.1, away from make dev's 8443-8447 (the kernel's ephemeral range).
read -r HERALD_INGRESS_PORT HERALD_EDGE_PORT HERALD_DASHBOARD_PORT < <(node -e '
  const net = require("net");
  const servers = [0, 1, 2].map(() => net.createServer());
  Promise.all(servers.map((s) => new Promise((r) => s.listen(0, "127.0.0.1", () => r(s.address().port)))))
    .then((ports) => { console.log(ports.join(" ")); servers.forEach((s) => s.close()); });
')
export HERALD_BIND=127.0.0.1 HERALD_INGRESS_PORT HERALD_EDGE_PORT HERALD_DASHBOARD_PORT
# The dev profile too (the Daraja simulator, auth's billing pointed at it), and the start held to
# the same bound the tests hold every restart to.
export COMPOSE_PROFILES=dev HERALD_COMPOSE_WAIT_S=120

cleanup() {
  local status=$? image
  trap '' INT TERM
  say 'cleaning up'
  if docker_answers; then
    stack_down --volumes --remove-orphans --timeout 20 >/dev/null 2>&1 ||
      say "warning: docker compose down failed for $HERALD_COMPOSE_PROJECT"
    if [[ -z ${HERALD_DEPLOY_TEST_KEEP_IMAGES:-} ]]; then
      docker image rm -f "$HERALD_IMAGE" >/dev/null 2>&1 || true
      # Stand-ins and Debian bases this run had to build, newest first (a stand-in before its base).
      if [[ -f $HERALD_DOCKER_STATE/built-images ]]; then
        for image in $(tac "$HERALD_DOCKER_STATE/built-images"); do
          docker image rm -f "$image" >/dev/null 2>&1 || true
        done
      fi
      docker image prune -f >/dev/null 2>&1 || true
    fi
    # The build cache of an engine this run started is this run's alone.
    docker_engine_started_here && docker builder prune -af >/dev/null 2>&1 || true
  fi
  docker_engine_stop
  as_root rm -rf "$HERALD_DEPLOY_DIR"
  rmdir "$ROOT/.data/deploy-test" 2>/dev/null || true
  say "done (exit $status)"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "project $HERALD_COMPOSE_PROJECT on 127.0.0.1:$HERALD_INGRESS_PORT (ingress), :$HERALD_EDGE_PORT (socket-edge), :$HERALD_DASHBOARD_PORT (dashboard)"
started=$(date +%s)
# make compose-up, as a newcomer runs it (its own phase timings go to the log).
make -s compose-up 2>&1 | tee "$HERALD_DOCKER_STATE/compose-up.log"
say "make compose-up took $(($(date +%s) - started)) s"
grep -q '^HERALD_TEST_KEY=' "$HERALD_DOCKER_STATE/compose-up.log" || die 'make compose-up printed no HERALD_TEST_KEY line'

# The images' sizes, for docs/operations.md.
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' |
  grep -E "^(${HERALD_IMAGE%%:*}|node|nats|postgres|debian):" | sed 's/^/test-deploy: image /' >&2 || true

npx vitest run --config vitest.deploy.config.ts
