#!/usr/bin/env bash
# `make soak`: bench/soak.ts (docs/operations.md, "Soak") against SOAK_TARGET's stack.
#
#   SOAK_TARGET=dev (default)  the test kit's processes, which bench/soak.ts starts itself
#   SOAK_TARGET=compose        the docker compose stack (deploy/docker-compose.yml), started here
#                              as scripts/test-deploy.sh starts it: its own project
#                              (herald-soak-<id>), free ports of 127.0.0.1, `make compose-up`,
#                              with deploy/soak/override.yaml publishing NATS, its monitoring port
#                              and the ops listeners on 127.0.0.1; then removed with its volumes,
#                              images and the dockerd it started (scripts/lib/stack-test.sh)
#
#   SOAK_COMPOSE_TIMEOUT_S  the compose run's bound, cleanup included (default: the soak's own
#                           bound, SOAK_MINUTES + SOAK_DRAIN_TIMEOUT_S + 10 minutes, and 30
#                           minutes for building, starting and removing the stack)
#   HERALD_TEST_KEEP_IMAGES=1, HERALD_TEST_IMAGE  as for make test-deploy (scripts/lib/stack-test.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

say() { printf 'soak: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

# Every socket is a descriptor: raise the soft limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
soak() { node --conditions=herald-source --import tsx bench/soak.ts; }

if [[ ${SOAK_TARGET:-dev} != compose ]]; then
  soak
  exit
fi

# The soak's settings checked before a stack is built for them (bench/src/soak/config.ts).
node --conditions=herald-source --import tsx -e \
  'import("./bench/src/soak/config.ts").then((c) => c.loadSoakConfig())' >/dev/null
export HERALD_STACK=compose
# shellcheck source=lib/stack-test.sh
. "$ROOT/scripts/lib/stack-test.sh"
[[ ${SOAK_MINUTES:-10} =~ ^[0-9]+$ && ${SOAK_DRAIN_TIMEOUT_S:-240} =~ ^[0-9]+$ ]] ||
  die 'SOAK_MINUTES and SOAK_DRAIN_TIMEOUT_S must be whole numbers (bench/soak.ts says their bounds)'
stack_test_bound "${SOAK_COMPOSE_TIMEOUT_S:-$((${SOAK_MINUTES:-10} * 60 + ${SOAK_DRAIN_TIMEOUT_S:-240} + 600 + 1800))}" "$@"
stack_test_init herald-soak
export HERALD_COMPOSE_WAIT_S=240
export HERALD_COMPOSE_OVERRIDE=$ROOT/deploy/soak/override.yaml
read -r HERALD_SOAK_NATS_PORT HERALD_SOAK_NATS_MONITOR_PORT HERALD_SOAK_OPS_PORT_AUTH \
  HERALD_SOAK_OPS_PORT_INGRESS_API HERALD_SOAK_OPS_PORT_SOCKET_EDGE HERALD_SOAK_OPS_PORT_STATUS \
  HERALD_SOAK_OPS_PORT_RETENTION < <(stack_free_ports 7)
export HERALD_SOAK_NATS_PORT HERALD_SOAK_NATS_MONITOR_PORT HERALD_SOAK_OPS_PORT_AUTH \
  HERALD_SOAK_OPS_PORT_INGRESS_API HERALD_SOAK_OPS_PORT_SOCKET_EDGE HERALD_SOAK_OPS_PORT_STATUS \
  HERALD_SOAK_OPS_PORT_RETENTION
# The test kit's plan catalogue (limits the load never meets), read by auth as the node user.
export HERALD_SOAK_PLANS_FILE=$HERALD_DEPLOY_DIR/soak-plans.json
node --conditions=herald-source --import tsx -e \
  'import("@herald/testkit").then((t) => process.stdout.write(JSON.stringify(t.TEST_PLANS)))' \
  >"$HERALD_SOAK_PLANS_FILE"
chmod 644 "$HERALD_SOAK_PLANS_FILE"

say "project $HERALD_COMPOSE_PROJECT on 127.0.0.1:$HERALD_INGRESS_PORT (ingress), :$HERALD_EDGE_PORT (socket-edge), NATS :$HERALD_SOAK_NATS_PORT (monitoring :$HERALD_SOAK_NATS_MONITOR_PORT)"
started=$(date +%s)
make -s compose-up >"$HERALD_DOCKER_STATE/compose-up.log" 2>&1 || {
  tail -n 40 "$HERALD_DOCKER_STATE/compose-up.log" >&2
  die 'make compose-up failed (its log above)'
}
say "make compose-up took $(($(date +%s) - started)) s"
soak
