# What the container tests share (scripts/test-deploy.sh, scripts/test-cluster.sh): a bounded run
# in its own process group, its own compose project, deploy folder, Herald image tag and free
# ports of 127.0.0.1, and a cleanup that removes what the run made. Sourced, never executed; the
# caller sets HERALD_STACK first and defines say and die.
#
#   stack_test_bound SECONDS ARGS...  re-runs the calling script under `timeout` (once)
#   stack_test_init NAME              the run's project (NAME-<id>), folders, image, ports, the
#                                     CA of the webhook receiver and push service; sources docker.sh and compose-stack.sh;
#                                     installs the cleanup
#   stack_free_ports N                N free ports of 127.0.0.1, on one line
#
# Settings:
#   HERALD_TEST_IMAGE            the Herald image to test under (default: NAME:<id>), built only
#                                when absent. .ci/run names one tag for both tests, so it is
#                                built once: the first test keeps it, the last removes it.
#   HERALD_TEST_KEEP_IMAGES=1    keep the images (HERALD_DEPLOY_TEST_KEEP_IMAGES too); otherwise
#                                the Herald image, the load balancer's and every stand-in listed
#                                in HERALD_BUILT_IMAGES_FILE (docker.sh) are removed at the end

STACK_TEST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

stack_test_bound() {
  local seconds=$1
  shift
  [[ -z ${HERALD_STACK_TEST_CHILD:-} ]] || return 0
  export HERALD_STACK_TEST_CHILD=1
  exec timeout --kill-after=120 "$seconds" "$0" "$@"
}

stack_test_init() {
  local name=$1 run_id
  run_id=$(date +%s)-$$
  export HERALD_COMPOSE_PROJECT=$name-$run_id
  export HERALD_DEPLOY_DIR=$STACK_TEST_ROOT/.data/$name/$run_id
  export HERALD_DOCKER_STATE=$HERALD_DEPLOY_DIR/docker
  export HERALD_IMAGE=${HERALD_TEST_IMAGE:-$name:$run_id}
  STACK_TEST_DATA=$STACK_TEST_ROOT/.data/$name
  STACK_TEST_KEEP=${HERALD_TEST_KEEP_IMAGES:-${HERALD_DEPLOY_TEST_KEEP_IMAGES:-}}
  # An image named from outside is reused when present (a CI run's earlier step built it).
  [[ -z ${HERALD_TEST_IMAGE:-} ]] || export HERALD_REUSE_IMAGES=1
  mkdir -p "$HERALD_DOCKER_STATE"
  # shellcheck source=docker.sh
  . "$STACK_TEST_ROOT/scripts/lib/docker.sh"
  # shellcheck source=compose-stack.sh
  . "$STACK_TEST_ROOT/scripts/lib/compose-stack.sh"
  # Three free ports on 127.0.0.1, away from make dev's 8443-8447 (the kernel's ephemeral range).
  read -r HERALD_INGRESS_PORT HERALD_EDGE_PORT HERALD_DASHBOARD_PORT < <(stack_free_ports 3)
  export HERALD_BIND=127.0.0.1 HERALD_INGRESS_PORT HERALD_EDGE_PORT HERALD_DASHBOARD_PORT
  trap stack_test_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  stack_test_webhook_ca
}

# N free ports of 127.0.0.1 (the kernel's ephemeral range), on one line.
stack_free_ports() {
  node -e '
    const net = require("net");
    const servers = Array.from({ length: Number(process.argv[1]) }, () => net.createServer());
    Promise.all(servers.map((s) => new Promise((r) => s.listen(0, "127.0.0.1", () => r(s.address().port)))))
      .then((ports) => { console.log(ports.join(" ")); servers.forEach((s) => s.close()); });
  ' "$1"
}

# The webhook receiver and the Web Push service the tests run on the Docker host
# (test/deploy/webhook-receiver.ts, test/deploy/push-service.ts) have a CA of their own, made here
# because status must trust it from its start: compose mounts HERALD_WEBHOOK_CA_FILE at
# /tls/webhook-ca.crt and HERALD_PUSH_CA_FILE (the same CA) at /tls/push-ca.crt, and the env file
# in HERALD_WEBHOOK_ENV_FILE has status read them, allows the host's private address for both,
# and retries within seconds rather than the production schedules' minutes and hours.
stack_test_webhook_ca() {
  local dir=$HERALD_DEPLOY_DIR/webhook-receiver
  mkdir -p "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj '/CN=Herald webhook receiver test CA' -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null ||
    die 'making the webhook receiver CA failed (openssl)'
  # Status runs as the image's node user and reads the certificate only.
  chmod 644 "$dir/ca.crt"
  cat >"$dir/webhooks.env" <<'EOF'
WEBHOOK_ALLOW_PRIVATE=true
WEBHOOK_CA_FILE=/tls/webhook-ca.crt
WEBHOOK_RETRY_SCHEDULE=1s,2s,5s,10s,30s,60s
PUSH_ALLOW_PRIVATE=true
PUSH_CA_FILE=/tls/push-ca.crt
PUSH_RETRY_SCHEDULE=1s,2s,5s,10s,30s,60s
EOF
  export HERALD_WEBHOOK_CA_FILE=$dir/ca.crt HERALD_WEBHOOK_ENV_FILE=$dir/webhooks.env
  export HERALD_PUSH_CA_FILE=$dir/ca.crt
}

stack_test_cleanup() {
  local status=$? image
  trap '' INT TERM
  say 'cleaning up'
  if docker_answers; then
    stack_down --volumes --remove-orphans --timeout 20 >/dev/null 2>&1 ||
      say "warning: docker compose down failed for $HERALD_COMPOSE_PROJECT"
    if [[ -z $STACK_TEST_KEEP ]]; then
      docker image rm -f "$HERALD_IMAGE" ${HERALD_LB_IMAGE:+"$HERALD_LB_IMAGE"} >/dev/null 2>&1 || true
      # Stand-ins and Debian bases this run (or, in CI, an earlier one that kept them) had to
      # build, newest first (a stand-in before its base).
      if [[ -f $(built_images_file) ]]; then
        for image in $(tac "$(built_images_file)"); do
          docker image rm -f "$image" >/dev/null 2>&1 || true
        done
        rm -f "$(built_images_file)"
      fi
      docker image prune -f >/dev/null 2>&1 || true
    fi
    # The build cache of an engine this run started is this run's alone.
    docker_engine_started_here && docker builder prune -af >/dev/null 2>&1 || true
  fi
  docker_engine_stop
  as_root rm -rf "$HERALD_DEPLOY_DIR"
  rmdir "$STACK_TEST_DATA" 2>/dev/null || true
  say "done (exit $status)"
  exit "$status"
}
