#!/usr/bin/env bash
# What losing its node does to an R1 consumer (docs/architecture-history.md, "A recipient's
# consumer on the cluster"), on a running `make cluster-up`: consumers.mjs makes the consumer and
# watches it; this kills the node it lives on 10 s later and starts it again 30 s after that.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
log=$(mktemp)
# As the operator (herald-admin): the scratch stream's subjects are no service's.
NATS_PASSWORD=$(sed -n 's/^HERALD_NATS_PASSWORD_ADMIN=//p' "${HERALD_DEPLOY_DIR:-deploy/cluster}/.env") \
  scripts/cluster.sh run --rm --no-deps -T -v "$PWD/test/cluster/measure:/measure:ro" \
  -e NATS_USER=herald-admin -e NATS_PASSWORD ingress-1 node /measure/consumers.mjs loss >"$log" 2>&1 &
watcher=$!
until grep -q '^LEADER ' "$log"; do sleep 0.5; done
node=$(sed -n 's/^LEADER //p' "$log")
sleep 10
echo "$(date +%T) docker kill $node"
scripts/cluster.sh kill "$node" >/dev/null
sleep 30
echo "$(date +%T) docker start $node"
scripts/cluster.sh start "$node" >/dev/null
wait "$watcher"
cat "$log"
rm -f "$log"
