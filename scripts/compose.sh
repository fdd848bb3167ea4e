#!/usr/bin/env bash
# Herald's docker compose stack (deploy/docker-compose.yml), from nothing to the demo key.
#
#   scripts/compose.sh up       make compose-up: install and start what is missing (Docker engine,
#                               compose plugin), make certificates and passwords, build the base
#                               and Herald images, start the stack and wait until every service
#                               is healthy, then make the demo account and Test key and print the
#                               HERALD_* lines. Again: keeps the data and, while valid, the key.
#   scripts/compose.sh down     make compose-down: stop and remove the containers; keep volumes
#   scripts/compose.sh backup DIR   Postgres dump and JetStream snapshot of the running stack
#   scripts/compose.sh restore DIR  put a backup back (docs/operations.md, "Backups")
#   scripts/compose.sh nats ARGS... the nats CLI as the operator, in a one-off container on the
#                               stack's network (NATS is never published): `nats stream ls`
#   scripts/compose.sh ARGS...  any other docker compose command on this stack (ps, logs, exec …)
#
# Settings (environment; deploy/env/compose.env.example lists them with their defaults):
#   HERALD_STACK            compose (deploy/docker-compose.yml), or cluster (compose.cluster.yaml:
#                           scripts/cluster.sh sets it); the defaults below are compose's
#   HERALD_COMPOSE_PROJECT  compose project name (herald; herald-cluster)
#   HERALD_COMPOSE_FILE     the compose file (deploy/docker-compose.yml)
#   HERALD_DEPLOY_DIR       where the stack's certificates (tls/), passwords (.env) and demo key
#                           (demo.env) live (deploy/; deploy/cluster/)
#   HERALD_REUSE_IMAGES=1   build only the images whose tag is not present yet
#   HERALD_BIND, HERALD_INGRESS_PORT, HERALD_EDGE_PORT, HERALD_DASHBOARD_PORT
#                           the published address and ports (127.0.0.1, 8443, 8444, 8445)
#   HERALD_PUBLIC_HOST      the name clients use (localhost); it goes into the certificate
#   HERALD_BUILD_CA_FILE    extra CA certificates for npm inside the image build (default: the
#                           cafile this host's npm uses, else NODE_EXTRA_CA_CERTS; empty: none)
#   HERALD_COMPOSE_WAIT_S   most seconds to wait for every service to be healthy (240)
#   COMPOSE_PROFILES=dev    also run the Daraja simulator, and point auth's billing at it
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/docker.sh
. "$ROOT/scripts/lib/docker.sh"
# shellcheck source=lib/compose-stack.sh
. "$ROOT/scripts/lib/compose-stack.sh"
# shellcheck source=lib/stack-backup.sh
. "$ROOT/scripts/lib/stack-backup.sh"

say() { printf 'compose: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

# Seconds since the previous call, for the phase timings each step prints.
phase_start=$(date +%s%N)
phase_done() {
  local now
  now=$(date +%s%N)
  say "$1 ($(awk -v ns=$((now - phase_start)) 'BEGIN { printf "%.1f", ns / 1e9 }') s)"
  phase_start=$now
}

up() {
  docker_engine_ensure
  phase_done 'engine ready'
  compose_plugin_ensure
  phase_done "compose plugin $(compose_plugin_version) ready"
  stack_tls_ensure
  stack_env_ensure
  phase_done "certificates and passwords in $HERALD_DEPLOY_DIR"
  herald_base_images_ensure
  # The cluster's load balancer is built on Debian's own HAProxy (deploy/lb/Dockerfile).
  [[ $HERALD_STACK != cluster ]] || debian_image_ensure bookworm
  phase_done 'base images ready'
  say "building $HERALD_IMAGE"
  stack_build_log=$HERALD_DOCKER_STATE/$HERALD_COMPOSE_PROJECT-build.log
  stack_build >"$stack_build_log" 2>&1 || {
    tail -n 40 "$stack_build_log" >&2
    die "building the Herald image failed; the build's output is above ($stack_build_log)"
  }
  phase_done "image $HERALD_IMAGE built"
  say "starting the stack (project $HERALD_COMPOSE_PROJECT; waiting up to ${HERALD_COMPOSE_WAIT_S}s for every service to be healthy)"
  stack_compose up -d --wait --wait-timeout "$HERALD_COMPOSE_WAIT_S" || {
    stack_compose ps -a >&2 || true
    stack_unhealthy_report >&2 || true
    die "the stack did not become healthy within ${HERALD_COMPOSE_WAIT_S}s: see 'scripts/compose.sh logs SERVICE'"
  }
  phase_done 'every service healthy'
  stack_demo_key
  stack_print
}

case ${1:-} in
  up) up ;;
  down)
    docker_answers || die 'no Docker engine answers: nothing to stop'
    shift
    # Every profile's containers (the dev profile's simulator too), whichever are active now.
    stack_down "$@"
    if [[ " $* " == *' --volumes '* || " $* " == *' -v '* ]]; then
      say 'stopped, and deleted its volumes (NATS store, Postgres data)'
    else
      say "stopped; the volumes (NATS store, Postgres data) are kept: '$STACK_SCRIPT down --volumes' deletes them"
    fi
    ;;
  backup)
    stack_env_ensure
    stack_backup "${2:-}"
    ;;
  restore)
    stack_env_ensure
    stack_restore "${2:-}"
    ;;
  nats)
    shift
    stack_env_ensure
    stack_nats_cli -- "$@"
    ;;
  '') die "usage: $STACK_SCRIPT up | down | backup DIR | restore DIR | nats ARGS | <docker compose command>" ;;
  *) stack_compose "$@" ;;
esac
