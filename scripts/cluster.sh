#!/usr/bin/env bash
# Herald scaled out (deploy/compose.cluster.yaml, project herald-cluster): scripts/compose.sh with
# HERALD_STACK=cluster, so the cluster is made, started, checked and printed by the same steps as
# the single-host stack. Its certificates, passwords and demo key live in deploy/cluster/.
#
#   scripts/cluster.sh up       make cluster-up: everything missing, then waits until every
#                               service is healthy and prints the HERALD_* lines (the load balancer)
#   scripts/cluster.sh down     make cluster-down: stop and remove the containers; keep volumes
#   scripts/cluster.sh backup DIR, restore DIR
#                               make backup / make restore STACK=cluster: Postgres and every
#                               stream (at its 3 replicas), as for the single-host stack; a restore
#                               needs all three NATS nodes up (docs/operations.md, "Backups")
#   scripts/cluster.sh nats ARGS...  the nats CLI as the operator, connected to any node
#   scripts/cluster.sh ARGS...  any other docker compose command on the cluster (ps, logs, kill …)
set -euo pipefail
export HERALD_STACK=cluster
exec "$(dirname "${BASH_SOURCE[0]}")/compose.sh" "$@"
