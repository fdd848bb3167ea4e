# Which nats-server (and nats CLI) Herald runs: the version deploy/docker-compose.yml pins for its
# nats image is the one pinned version string; tests, bench and `make dev` run that release (or a
# newer one already on PATH), never Debian's 2.9.10. Sourced, never executed.
#
#   nats_pinned_version     prints the pinned version (e.g. 2.12.15)
#   nats_server_bin         prints the nats-server to run, or nothing when none is good enough
#   nats_cli_bin            prints the nats CLI to run, or nothing

NATS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# A project-local bin folder: `make deps` builds missing tools here with `go install`.
HERALD_BIN_DIR=${HERALD_BIN_DIR:-$NATS_ROOT/.bin}
# natscli has no image in deploy/: its pin lives here.
NATSCLI_VERSION=0.5.1

nats_pinned_version() {
  sed -nE 's/^[[:space:]]*image:[[:space:]]*nats:([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' \
    "$NATS_ROOT/deploy/docker-compose.yml" | head -n 1
}

# version_at_least HAVE WANT: true when HAVE >= WANT (dotted numbers).
version_at_least() {
  [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" == "$2" ]]
}

# The version a nats-server binary reports, e.g. "2.12.15" (empty when it does not run).
nats_server_version_of() {
  "$1" --version 2>/dev/null | sed -nE 's/^nats-server: v?([0-9]+\.[0-9]+\.[0-9]+).*/\1/p'
}

nats_server_bin() {
  local want candidate have
  want=$(nats_pinned_version)
  for candidate in "$HERALD_BIN_DIR/nats-server" "$(command -v nats-server 2>/dev/null || true)"; do
    [[ -n $candidate && -x $candidate ]] || continue
    have=$(nats_server_version_of "$candidate")
    if [[ -n $have ]] && version_at_least "$have" "$want"; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 0
}

nats_cli_bin() {
  local candidate
  for candidate in "$HERALD_BIN_DIR/nats" "$(command -v nats 2>/dev/null || true)"; do
    [[ -n $candidate && -x $candidate ]] && "$candidate" --version >/dev/null 2>&1 && {
      printf '%s\n' "$candidate"
      return 0
    }
  done
  return 0
}
