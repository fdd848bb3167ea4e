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
#   HERALD_TEST_IMAGE                  the Herald image's tag (scripts/lib/stack-test.sh)
#
# Arguments go to vitest: `scripts/test-deploy.sh test/deploy/pusher.deploy.ts` runs that file only.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

say() { printf 'test-deploy: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

export HERALD_STACK=compose
# shellcheck source=lib/stack-test.sh
. "$ROOT/scripts/lib/stack-test.sh"
# The bound: the whole run, cleanup included, in its own process group that timeout ends.
stack_test_bound "${HERALD_DEPLOY_TEST_TIMEOUT_S:-2400}" "$@"
stack_test_init herald-deploy-test
# The dev profile too (the Daraja simulator, auth's billing pointed at it), and the start held to
# the same bound the tests hold every restart to.
export COMPOSE_PROFILES=dev HERALD_COMPOSE_WAIT_S=120
say "project $HERALD_COMPOSE_PROJECT on 127.0.0.1:$HERALD_INGRESS_PORT (ingress), :$HERALD_EDGE_PORT (socket-edge), :$HERALD_DASHBOARD_PORT (dashboard)"
started=$(date +%s)
# make compose-up, as a newcomer runs it (its own phase timings go to the log).
make -s compose-up 2>&1 | tee "$HERALD_DOCKER_STATE/compose-up.log"
say "make compose-up took $(($(date +%s) - started)) s"
grep -q '^HERALD_TEST_KEY=' "$HERALD_DOCKER_STATE/compose-up.log" || die 'make compose-up printed no HERALD_TEST_KEY line'

# The images' sizes, for docs/operations.md.
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' |
  grep -E "^(${HERALD_IMAGE%%:*}|node|nats|postgres|debian):" | sed 's/^/test-deploy: image /' >&2 || true

npx vitest run --config vitest.deploy.config.ts "$@"
