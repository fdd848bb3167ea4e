# One Herald compose stack: its settings, its docker compose command line, its certificates,
# passwords and demo key. Sourced (after docker.sh) by scripts/compose.sh and the deploy tests;
# the caller defines say and die. Several stacks can live on one engine: each has its own project
# name, deploy folder and published ports.
#
# HERALD_STACK picks the stack's shape: `compose` (deploy/docker-compose.yml, one of each service)
# or `cluster` (deploy/compose.cluster.yaml: three NATS nodes, two ingresses and two edges behind
# a load balancer, which alone publishes the ports). The other settings default per shape.

HERALD_STACK=${HERALD_STACK:-compose}
case $HERALD_STACK in
  compose)
    stack_file_default=$DOCKER_ROOT/deploy/docker-compose.yml stack_project_default=herald
    stack_dir_default=$DOCKER_ROOT/deploy
    # The services publishing the ingress, edge and dashboard ports; the NATS node whose service
    # the backups' nats CLI runs as (any one: the CLI lists every node).
    STACK_INGRESS_SERVICE=ingress-api STACK_EDGE_SERVICE=socket-edge STACK_DASHBOARD_SERVICE=auth
    STACK_NATS_SERVICE=nats STACK_SCRIPT=scripts/compose.sh
    # Every NATS node (the nats CLI of the backups lists them all).
    STACK_NATS_SERVICES=(nats)
    # The Herald services (what a restore stops), and the names the containers reach each other
    # by, plus the public one: all in the one certificate.
    STACK_SERVICES=(auth ingress-api socket-edge retention status)
    STACK_TLS_NAMES=(nats postgres auth ingress-api socket-edge daraja-sim)
    ;;
  cluster)
    stack_file_default=$DOCKER_ROOT/deploy/compose.cluster.yaml stack_project_default=herald-cluster
    stack_dir_default=$DOCKER_ROOT/deploy/cluster
    STACK_INGRESS_SERVICE=lb STACK_EDGE_SERVICE=lb STACK_DASHBOARD_SERVICE=lb STACK_NATS_SERVICE=nats-1
    STACK_NATS_SERVICES=(nats-1 nats-2 nats-3)
    STACK_SCRIPT=scripts/cluster.sh
    STACK_SERVICES=(auth ingress-1 ingress-2 edge-1 edge-2 retention status)
    STACK_TLS_NAMES=(nats-1 nats-2 nats-3 postgres auth ingress-1 ingress-2 edge-1 edge-2)
    ;;
  *)
    printf 'HERALD_STACK=%s: must be compose or cluster\n' "$HERALD_STACK" >&2
    exit 1
    ;;
esac

HERALD_DEPLOY_DIR=$(mkdir -p "${HERALD_DEPLOY_DIR:-$stack_dir_default}" && cd "${HERALD_DEPLOY_DIR:-$stack_dir_default}" && pwd)
# The stack's settings in its .env count here as they do for compose, the environment winning.
if [[ -f $HERALD_DEPLOY_DIR/.env ]]; then
  while IFS='=' read -r stack_k stack_v; do
    [[ $stack_k =~ ^HERALD_[A-Z0-9_]+$ && -z ${!stack_k+set} ]] && export "$stack_k=$stack_v"
  done < <(grep -E '^HERALD_[A-Z0-9_]+=' "$HERALD_DEPLOY_DIR/.env" || true)
  unset stack_k stack_v
fi
HERALD_COMPOSE_PROJECT=${HERALD_COMPOSE_PROJECT:-$stack_project_default}
HERALD_COMPOSE_WAIT_S=${HERALD_COMPOSE_WAIT_S:-240}
STACK_FILE=${HERALD_COMPOSE_FILE:-$stack_file_default}
# A second compose file merged over the stack's (`SOAK_TARGET=compose make soak` names
# deploy/soak/override.yaml); none by default.
STACK_OVERRIDE=${HERALD_COMPOSE_OVERRIDE:-}
# The make targets that start and stop this stack, for what the scripts print.
STACK_MAKE=${HERALD_STACK}
# compose reads these from the environment (interpolation in the compose files).
export HERALD_TLS_DIR=$HERALD_DEPLOY_DIR/tls
export HERALD_IMAGE=${HERALD_IMAGE:-herald:local}
export HERALD_PUBLIC_HOST=${HERALD_PUBLIC_HOST:-localhost}
unset stack_file_default stack_project_default stack_dir_default

stack_compose() {
  docker compose -p "$HERALD_COMPOSE_PROJECT" -f "$STACK_FILE" ${STACK_OVERRIDE:+-f "$STACK_OVERRIDE"} \
    --env-file "$HERALD_DEPLOY_DIR/.env" "$@"
}

# Builds the stack's images (Herald's, and the load balancer's in a cluster). With
# HERALD_REUSE_IMAGES=1, only those whose tag is not present yet: a CI run builds Herald's image
# once, for the compose stack, and the cluster test starts from it.
stack_build() {
  local missing=() svc image
  if [[ -z ${HERALD_REUSE_IMAGES:-} ]]; then
    stack_compose build
    return
  fi
  while read -r svc image; do
    image_present "$image" || missing+=("$svc")
  done < <(stack_compose config --format json | node -e '
    const { services } = JSON.parse(require("fs").readFileSync(0, "utf8"));
    for (const [name, s] of Object.entries(services)) if (s.build && s.image) console.log(name, s.image);
  ')
  if [[ ${#missing[@]} -eq 0 ]]; then
    say 'every image of the stack is present (HERALD_REUSE_IMAGES=1): nothing built'
    return 0
  fi
  stack_compose build "${missing[@]}"
}

# `docker compose down ARGS` for every profile's containers. Engine 20.10 can refuse to remove a
# network ("has active endpoints") for a moment after it removed the network's last container;
# down is idempotent, so it runs again, at most three times in all.
# What a failed `up --wait` needs to be understood from its log alone: for each container not
# healthy, its last health probes and the tail of its log; then the host's load and busiest
# processes (a starved host fails probes of services that are fine).
stack_unhealthy_report() {
  local id name
  for id in $(stack_compose ps -a -q); do
    name=$(docker inspect --format '{{.Name}} {{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$id")
    [[ $name != *' healthy' ]] || continue
    printf '\n--- %s: last health probes\n' "$name"
    docker inspect --format '{{if .State.Health}}{{range .State.Health.Log}}{{.Start}} exit {{.ExitCode}} {{.Output}}{{println}}{{end}}{{end}}' "$id" | tail -n 6
    printf -- '--- %s: last 30 log lines\n' "$name"
    docker logs --tail 30 "$id" 2>&1 | cut -c1-400
  done
  printf '\n--- host: %s\n' "$(uptime)"
  ps -eo pid,pcpu,etimes,rss,args --sort=-pcpu | head -n 12 | cut -c1-200
}

stack_down() {
  local try
  for try in 1 2 3; do
    stack_compose --profile '*' down "$@" && return 0
    ((try < 3)) || break
    say "docker compose down did not finish (above): trying again"
    stack_release_networks
    sleep 2
  done
  return 1
}

# An engine can keep a stale endpoint on a network after the container behind it is gone (seen
# after a restart of every service: "has active endpoints" on every retry, no container left), and
# then never removes the network. `docker network disconnect -f` is the engine's own remedy: run
# on every endpoint still attached to one of the project's networks once its containers are down.
stack_release_networks() {
  local net ep
  for net in $(docker network ls -q --filter "label=com.docker.compose.project=$HERALD_COMPOSE_PROJECT"); do
    for ep in $(docker network inspect --format '{{range $id, $c := .Containers}}{{$c.Name}} {{end}}' "$net" 2>/dev/null); do
      say "disconnecting the stale endpoint $ep from network $net"
      docker network disconnect -f "$net" "$ep" >/dev/null 2>&1 || true
    done
  done
}

# What npm inside the image build must trust beyond the image's own CAs (see the header of
# scripts/compose.sh). Exported for the compose file's build secret.
stack_build_ca() {
  local file
  if [[ -n ${HERALD_BUILD_CA_FILE+set} ]]; then
    file=$HERALD_BUILD_CA_FILE
  else
    file=$(npm config get cafile 2>/dev/null || true)
    [[ $file == null || $file == undefined ]] && file=''
    [[ -n $file ]] || file=${NODE_EXTRA_CA_CERTS:-}
  fi
  if [[ -z $file ]]; then
    unset HERALD_BUILD_CA_FILE
    return 0
  fi
  [[ -r $file ]] || die "HERALD_BUILD_CA_FILE=$file cannot be read: name a PEM bundle, or set it empty for none"
  export HERALD_BUILD_CA_FILE=$file
}

stack_tls_ensure() {
  local tls=$HERALD_TLS_DIR name sans missing=''
  # Logs go to the engine state folder, which exists only once dockerd was started from here.
  mkdir -p "$HERALD_DOCKER_STATE"
  sans=$(printf 'DNS:%s,' "${STACK_TLS_NAMES[@]}")
  sans=${sans%,}
  [[ $HERALD_PUBLIC_HOST == localhost ]] || sans+=",DNS:$HERALD_PUBLIC_HOST"
  # A certificate made before a name was needed (or for another public host) is re-issued.
  if [[ -s $tls/tls.crt ]]; then
    for name in "${STACK_TLS_NAMES[@]}" "$HERALD_PUBLIC_HOST"; do
      openssl x509 -in "$tls/tls.crt" -noout -ext subjectAltName 2>/dev/null | grep -q "DNS:$name\b" || missing+=" $name"
    done
    if [[ -n $missing ]]; then
      say "re-issuing $tls/tls.crt: it does not name$missing"
      rm -f "$tls/tls.crt"
    fi
  fi
  HERALD_TLS_SANS=$sans "$DOCKER_ROOT/scripts/gen-certs.sh" "$tls" >"$HERALD_DOCKER_STATE/gen-certs.log" 2>&1 || {
    cat "$HERALD_DOCKER_STATE/gen-certs.log" >&2
    die 'creating the certificates failed; output above'
  }
  chmod 755 "$tls"
  # The services run as the image's `node` user (uid 1000) and read the key; NATS and Postgres
  # start as root (Postgres copies it for its own user).
  if [[ $(stat -c %u "$tls/tls.key") != 1000 ]]; then
    as_root chown 1000:1000 "$tls/tls.key"
  fi
}

# deploy/.env: the secrets compose needs, made once: passwords in hex (URL-safe inside
# DATABASE_URL), SECRET_ENCRYPTION_KEY (seals keys' signing secrets) and WEBHOOK_SECRET_KEY
# (seals webhook endpoints' secrets) as 32 bytes in base64, and the NATS auth callout's key pair.
# A stack made before a secret existed gets it at its next compose-up.
STACK_SECRETS=(POSTGRES_PASSWORD HERALD_NATS_PASSWORD_ADMIN HERALD_NATS_PASSWORD_AUTH
  HERALD_NATS_PASSWORD_INGRESS_API HERALD_NATS_PASSWORD_SOCKET_EDGE HERALD_NATS_PASSWORD_RETENTION
  HERALD_NATS_PASSWORD_STATUS SECRET_ENCRYPTION_KEY WEBHOOK_SECRET_KEY)
stack_env_ensure() {
  local env=$HERALD_DEPLOY_DIR/.env name pair value
  if ! grep -Eq '^HERALD_NATS_CALLOUT_SEED=.+' "$env" 2>/dev/null; then
    pair=$(cd "$DOCKER_ROOT" && node --input-type=module -e '
      import { createAccount } from "nkeys.js";
      const a = createAccount();
      console.log(`HERALD_NATS_CALLOUT_ISSUER=${a.getPublicKey()}`);
      console.log(`HERALD_NATS_CALLOUT_SEED=${new TextDecoder().decode(a.getSeed())}`);') ||
      die 'making the NATS callout key failed (node and nkeys.js: run make deps)'
    (
      umask 077
      touch "$env"
      sed -i '/^HERALD_NATS_CALLOUT_\(ISSUER\|SEED\)=/d' "$env"
      printf '%s\n' "$pair" >>"$env"
    )
    say "made the NATS callout key in $env"
  fi
  for name in "${STACK_SECRETS[@]}"; do
    if ! grep -Eq "^$name=.+" "$env" 2>/dev/null; then
      # hn first: nats-server parses its passwords as config values, where a digit starts a number.
      if [[ $name == *_KEY ]]; then value=$(openssl rand -base64 32); else value=hn$(openssl rand -hex 24); fi
      (
        umask 077
        touch "$env"
        sed -i "/^$name=/d" "$env"
        printf '%s=%s\n' "$name" "$value" >>"$env"
      )
      say "made a $name in $env"
    fi
  done
  if [[ ,${COMPOSE_PROFILES:-}, == *,dev,* ]]; then
    export HERALD_BILLING_ENV_FILE=$DOCKER_ROOT/deploy/dev/billing-simulator.env
  fi
  stack_build_ca
}

# The address a published port answers on, as host:port (compose's own answer).
stack_port() {
  local addr
  addr=$(stack_compose port "$1" "$2" 2>/dev/null | head -n 1)
  [[ -n $addr ]] || die "$1 publishes no port $2: is the stack up?"
  echo "${addr##*:}"
}

# The admin CLI inside the running auth container, as demo-key.sh expects it.
admin() { stack_compose exec -T auth node services/auth/dist/admin.js "$@"; }
demo_account_by_email() {
  stack_compose exec -T postgres psql -U herald -d herald -XtAq -v ON_ERROR_STOP=1 \
    -c "select id from accounts where email = '$1'"
}

stack_demo_key() {
  # shellcheck source=demo-key.sh
  . "$DOCKER_ROOT/scripts/lib/demo-key.sh"
  demo_key_ensure "$HERALD_DEPLOY_DIR/demo.env" "$HERALD_DOCKER_STATE/$HERALD_COMPOSE_PROJECT-admin.log"
  STACK_BASE_URL=https://$HERALD_PUBLIC_HOST:$(stack_port "$STACK_INGRESS_SERVICE" 8443)
  STACK_WS_URL=wss://$HERALD_PUBLIC_HOST:$(stack_port "$STACK_EDGE_SERVICE" 8444)
  STACK_DASHBOARD_URL=https://$HERALD_PUBLIC_HOST:$(stack_port "$STACK_DASHBOARD_SERVICE" 8445)/
  demo_env_write "$HERALD_DEPLOY_DIR/demo.env" "$STACK_BASE_URL" "$STACK_WS_URL"
}

stack_print() {
  local ca=$HERALD_TLS_DIR/ca.crt
  local connect_url="$STACK_WS_URL/ws/connect?api_key=$HERALD_TEST_KEY&recipient=$HERALD_RECIPIENT&client=mobile"
  local body="{\"recipient\":\"$HERALD_RECIPIENT\",\"payload\":{\"hello\":\"world\"},\"api_key\":\"$HERALD_TEST_KEY\",\"client\":\"mobile\"}"
  cat <<EOF

Herald is running in docker compose (project $HERALD_COMPOSE_PROJECT). make $STACK_MAKE-down stops it
and keeps its data; $STACK_SCRIPT logs -f SERVICE follows a service's log.

HERALD_BASE_URL=$STACK_BASE_URL
HERALD_WS_URL=$STACK_WS_URL
HERALD_TEST_KEY=$HERALD_TEST_KEY
HERALD_ACCOUNT_ID=$HERALD_ACCOUNT_ID
HERALD_DASHBOARD_URL=$STACK_DASHBOARD_URL

The Test key expires at $HERALD_TEST_KEY_EXPIRES_AT (make $STACK_MAKE-up issues a new one then).
Paste the lines above into a shell (or: . $HERALD_DEPLOY_DIR/demo.env), then

Send an event to recipient $HERALD_RECIPIENT (202 while it is offline: queued; 200 once connected):
  curl --cacert $ca -H 'content-type: application/json' -d '$body' \$HERALD_BASE_URL/notify

Receive events (queued ones arrive on connect, then live ones):
  NODE_EXTRA_CA_CERTS=$ca node -e "new (require('ws'))(process.argv[1]).on('message', (m) => console.log(String(m)))" '$connect_url'

The dashboard is at HERALD_DASHBOARD_URL once your browser trusts $ca.

EOF
}
