#!/usr/bin/env bash
# `make test-cluster`: Herald scaled out (deploy/compose.cluster.yaml) as real containers, started
# by `make cluster-up` as a newcomer runs it, then test/cluster/faults.cluster.ts: a steady
# dispatch load through the load balancer while NATS nodes, edges and ingresses are killed, cut
# off and restarted, and at the end every event answered 200 or 202 must have been delivered, and
# its event.delivered webhook must have reached the test's HTTPS receiver (whose CA
# scripts/lib/stack-test.sh makes before the stack starts), and every Pusher sendToUser answered
# 200 must have reached its pusher-js user (test/cluster/pusher-load.ts); and
# test/cluster/backup.cluster.ts: scripts/cluster.sh backup, every container and volume removed,
# restore, then what was queued at backup time arrives and the keys work; and
# test/cluster/fanout.cluster.ts: a topic fan-out of 12,000 members through a NATS node kill gives
# every member its copy. Its own compose project,
# free ports of 127.0.0.1 and cleanup, as make test-deploy (scripts/lib/stack-test.sh). Arguments
# go to vitest: `scripts/test-cluster.sh test/cluster/backup.cluster.ts` runs that file alone.
#
#   HERALD_CLUSTER_TEST_TIMEOUT_S   the whole run's bound (1500 s); past it the run fails
#   HERALD_TEST_IMAGE               the Herald image's tag: .ci/run passes the one make test-deploy
#                                   built, so it is not built again
#   HERALD_TEST_KEEP_IMAGES=1       keep the images afterwards
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

say() { printf 'test-cluster: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

export HERALD_STACK=cluster
# shellcheck source=lib/stack-test.sh
. "$ROOT/scripts/lib/stack-test.sh"
stack_test_bound "${HERALD_CLUSTER_TEST_TIMEOUT_S:-1500}" "$@"
stack_test_init herald-cluster-test
export HERALD_LB_IMAGE=${HERALD_COMPOSE_PROJECT}-lb:latest HERALD_COMPOSE_WAIT_S=240

say "project $HERALD_COMPOSE_PROJECT: the load balancer on 127.0.0.1:$HERALD_INGRESS_PORT (ingress), :$HERALD_EDGE_PORT (edges), :$HERALD_DASHBOARD_PORT (dashboard)"
started=$(date +%s)
make -s cluster-up 2>&1 | tee "$HERALD_DOCKER_STATE/cluster-up.log"
say "make cluster-up took $(($(date +%s) - started)) s"
grep -q '^HERALD_TEST_KEY=' "$HERALD_DOCKER_STATE/cluster-up.log" || die 'make cluster-up printed no HERALD_TEST_KEY line'

npx vitest run --config vitest.deploy.config.ts "$@"
