#!/usr/bin/env bash
# `make lint`'s compose check: `docker compose config --quiet` must pass for every compose file
# under deploy/, with every profile (and the soak's override over the stack it amends). Needs the
# compose plugin (built once when missing), not an engine. The secrets are placeholders: config
# only checks that they are set.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/docker.sh
. "$ROOT/scripts/lib/docker.sh"

compose_plugin_ensure
files=()
while IFS= read -r f; do files+=("$f"); done < <(
  find "$ROOT/deploy" -maxdepth 2 -type f \( -name 'docker-compose*.yml' -o -name 'docker-compose*.yaml' -o -name 'compose*.yml' -o -name 'compose*.yaml' \) | sort
)
[[ ${#files[@]} -gt 0 ]] || docker_die 'no compose file under deploy/'
# FILE [OVERRIDE]: `docker compose config --quiet` of FILE (merged with OVERRIDE), every profile.
check() {
  (
    # The file as shipped: none of this shell's stack settings take part.
    for v in $(compgen -e | grep -E '^(HERALD_|COMPOSE_)' || true); do unset "$v"; done
    for v in POSTGRES_PASSWORD HERALD_NATS_PASSWORD_ADMIN HERALD_NATS_PASSWORD_AUTH \
      HERALD_NATS_PASSWORD_INGRESS_API HERALD_NATS_PASSWORD_SOCKET_EDGE \
      HERALD_NATS_PASSWORD_RETENTION HERALD_NATS_PASSWORD_STATUS HERALD_NATS_CALLOUT_ISSUER \
      HERALD_NATS_CALLOUT_SEED SECRET_ENCRYPTION_KEY WEBHOOK_SECRET_KEY; do export "$v=lint"; done
    # What scripts/soak.sh sets for deploy/soak/override.yaml.
    for v in NATS_PORT NATS_MONITOR_PORT OPS_PORT_AUTH OPS_PORT_INGRESS_API OPS_PORT_SOCKET_EDGE \
      OPS_PORT_STATUS OPS_PORT_RETENTION; do export "HERALD_SOAK_$v=1"; done
    export HERALD_SOAK_PLANS_FILE=/dev/null
    compose_cmd -f "$1" ${2:+-f "$2"} --env-file /dev/null --profile '*' config --quiet
  ) || docker_die "docker compose config refuses ${1#"$ROOT"/}${2:+ with ${2#"$ROOT"/}} (above)"
}
for f in "${files[@]}"; do check "$f"; done
# The soak's override, over the stack it amends (scripts/soak.sh).
check "$ROOT/deploy/docker-compose.yml" "$ROOT/deploy/soak/override.yaml"
printf 'compose-lint: %d compose file(s) valid: %s(and deploy/soak/override.yaml over deploy/docker-compose.yml)\n' "${#files[@]}" "$(printf '%s ' "${files[@]#"$ROOT"/}")"
