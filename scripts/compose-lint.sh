#!/usr/bin/env bash
# `make lint`'s compose check: `docker compose config --quiet` must pass for every compose file
# under deploy/, with every profile. Needs the compose plugin (built once when missing), not an
# engine. The passwords are placeholders: config only checks that they are set.
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
for f in "${files[@]}"; do
  (
    # The file as shipped: none of this shell's stack settings take part.
    for v in $(compgen -e | grep -E '^(HERALD_|COMPOSE_)' || true); do unset "$v"; done
    NATS_PASSWORD=lint POSTGRES_PASSWORD=lint SECRET_ENCRYPTION_KEY=lint compose_cmd -f "$f" --env-file /dev/null --profile '*' config --quiet
  ) || docker_die "docker compose config refuses ${f#"$ROOT"/} (above)"
done
printf 'compose-lint: %d compose file(s) valid: %s\n' "${#files[@]}" "$(printf '%s ' "${files[@]#"$ROOT"/}")"
