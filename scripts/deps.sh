#!/usr/bin/env bash
# Installs what Herald needs on a fresh Debian/Ubuntu machine that already has Node, and nothing
# when everything is there (so `make dev` and `make test` can call it every time).
#
#   scripts/deps.sh           node_modules, nats-server (pinned, see scripts/lib/nats-bin.sh), PostgreSQL, openssl
#   scripts/deps.sh bench     for `make bench` and its tests: redis-server and Centrifugo (pinned, scripts/lib/centrifugo-bin.sh)
#   scripts/deps.sh browser   chromium, for the browser tests
#
# HERALD_DEPS_DRY_RUN=1 prints what would be installed instead of installing it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

dry_run=${HERALD_DEPS_DRY_RUN:-}

say() { printf 'deps: %s\n' "$*" >&2; }
die() {
  say "$*"
  exit 1
}

# shellcheck source=lib/as-root.sh
. "$ROOT/scripts/lib/as-root.sh"

apt_updated=
apt_install() {
  if [[ -n $dry_run ]]; then
    say "would run: apt-get install -y $*"
    return 0
  fi
  command -v apt-get >/dev/null 2>&1 ||
    die "missing $*, and this is not a Debian/Ubuntu machine (no apt-get): install $* yourself"
  say "installing $* (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  if [[ -z $apt_updated ]]; then
    as_root apt-get update -qq
    apt_updated=1
  fi
  as_root apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

have() { command -v "$1" >/dev/null 2>&1; }

# Debian keeps initdb/pg_ctl out of PATH, under /usr/lib/postgresql/<major>/bin.
have_initdb() {
  have initdb && return 0
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

check_node() {
  have node || die 'Node.js is not installed: install Node 20.19 or newer (https://nodejs.org)'
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' ||
    die "Node $(node --version) is too old: Herald needs Node 20.19 or newer"
}

# node_modules is stale when any package the lockfile pins is absent from npm's record of what it
# installed (node_modules/.package-lock.json) or there at another version. Comparing contents
# rather than mtimes keeps a fresh checkout (new mtimes, same lock) from reinstalling.
node_modules_stale() {
  [[ -f node_modules/.package-lock.json ]] || return 0
  ! node -e '
    const fs = require("fs");
    const lock = JSON.parse(fs.readFileSync("package-lock.json", "utf8")).packages ?? {};
    const have = JSON.parse(fs.readFileSync("node_modules/.package-lock.json", "utf8")).packages ?? {};
    for (const [path, want] of Object.entries(lock)) {
      if (path === "") continue;
      const got = have[path];
      // npm skips optional packages built for other platforms.
      if (!got) { if (want.optional) continue; process.exit(1); }
      if (want.version !== undefined && got.version !== want.version) process.exit(1);
    }
  ' 2>/dev/null
}

install_node_modules() {
  [[ -f package-lock.json ]] || die 'package-lock.json is missing: run npm install once to create it'
  node_modules_stale || return 0
  if [[ -n $dry_run ]]; then
    say 'would run: npm install --no-save'
    return 0
  fi
  # Not `npm ci`: the registry these machines reach 404s biome's non-Linux platform packages
  # (@biomejs/cli-win32-x64 and the like), so npm writes a lock without them and `npm ci` then
  # refuses that lock as out of sync. `npm install --no-save` installs the versions the lock
  # pins and leaves package.json and the lock untouched.
  say 'node_modules is missing or older than package-lock.json: npm install --no-save'
  npm install --no-save --no-audit --no-fund --loglevel=error
}

# shellcheck source=lib/nats-bin.sh
. "$ROOT/scripts/lib/nats-bin.sh"
# shellcheck source=lib/centrifugo-bin.sh
. "$ROOT/scripts/lib/centrifugo-bin.sh"

go_bin() {
  if have go; then
    command -v go
  elif [[ -x /usr/local/go/bin/go ]]; then
    echo /usr/local/go/bin/go
  fi
}

# nats-server at the version deploy/docker-compose.yml pins (or newer, already on PATH); otherwise
# built with `go install` into .bin/. Debian's package (2.9.10) is too old for tests and bench.
install_nats() {
  local want go
  want=$(nats_pinned_version)
  [[ -n $want ]] || die 'no pinned nats image (image: nats:X.Y.Z-alpine) in deploy/docker-compose.yml'
  if [[ -z $(nats_server_bin) ]]; then
    go=$(go_bin)
    [[ -n $go ]] ||
      die "nats-server $want or newer is needed and Go is not installed: install Go (https://go.dev/dl) and rerun make deps, or put nats-server v$want (https://github.com/nats-io/nats-server/releases) on PATH"
    if [[ -n $dry_run ]]; then
      say "would run: GOBIN=$HERALD_BIN_DIR go install github.com/nats-io/nats-server/v2@v$want"
    else
      say "building nats-server v$want into $HERALD_BIN_DIR (go install)"
      GOBIN=$HERALD_BIN_DIR GOFLAGS=-buildvcs=false CGO_ENABLED=0 "$go" install "github.com/nats-io/nats-server/v2@v$want" ||
        die "go install of nats-server v$want failed (output above)"
    fi
  fi
  # The nats CLI serves the docs' service-to-service example and ops; nothing in the tests needs
  # it, so a failed build warns instead of stopping `make test`.
  if [[ -z $(nats_cli_bin) ]]; then
    go=$(go_bin)
    if [[ -z $go ]]; then
      say "warning: the nats CLI is missing and Go is not installed (optional: used by docs and ops)"
    elif [[ -n $dry_run ]]; then
      say "would run: GOBIN=$HERALD_BIN_DIR go install github.com/nats-io/natscli/nats@v$NATSCLI_VERSION"
    else
      say "building the nats CLI v$NATSCLI_VERSION into $HERALD_BIN_DIR (go install)"
      GOBIN=$HERALD_BIN_DIR GOFLAGS=-buildvcs=false CGO_ENABLED=0 "$go" install "github.com/nats-io/natscli/nats@v$NATSCLI_VERSION" ||
        say "warning: go install of the nats CLI failed (optional: used by docs and ops)"
    fi
  fi
}

# Centrifugo, the peer `make bench` measures Herald against (issue 31), at its pinned version, built
# with `go install` into .bin/. Only the bench needs it: without Go, or when the build fails, this
# warns and the bench says Centrifugo was skipped and why.
install_centrifugo() {
  local go
  [[ -z $(centrifugo_bin) ]] || return 0
  go=$(go_bin)
  if [[ -z $go ]]; then
    say "warning: Go is not installed, so Centrifugo v$CENTRIFUGO_VERSION (make bench's peer baseline) is not built: make bench will skip it"
  elif [[ -n $dry_run ]]; then
    say "would run: GOBIN=$HERALD_BIN_DIR go install -ldflags '$CENTRIFUGO_LDFLAGS' $CENTRIFUGO_MODULE@v$CENTRIFUGO_VERSION"
  else
    say "building Centrifugo v$CENTRIFUGO_VERSION into $HERALD_BIN_DIR (go install; make bench's peer baseline)"
    GOBIN=$HERALD_BIN_DIR GOFLAGS=-buildvcs=false "$go" install -ldflags "$CENTRIFUGO_LDFLAGS" \
      "$CENTRIFUGO_MODULE@v$CENTRIFUGO_VERSION" ||
      say "warning: go install of Centrifugo v$CENTRIFUGO_VERSION failed (output above): make bench will fail until it is built"
  fi
}

install_system() {
  local missing=()
  have_initdb || missing+=(postgresql)
  have openssl || missing+=(openssl)
  have curl || missing+=(curl)
  [[ ${#missing[@]} -eq 0 ]] || apt_install "${missing[@]}"
}

# The bench's peer: Centrifugo, and for its Redis engine a redis-server the bench runs itself on a
# free port. Apart from `make deps` so that a newcomer's first `make dev` does not wait for a
# Centrifugo build it never uses; `make bench` and `make test` (the bench's own tests) call it.
install_bench() {
  have redis-server || apt_install redis-server
  install_centrifugo
}

install_browser() {
  [[ -x /usr/bin/chromium ]] || apt_install chromium
  # The push click test runs a private session bus that Chromium shows its notifications on.
  have dbus-daemon || apt_install dbus-daemon
}

case ${1:-core} in
  core)
    check_node
    install_system
    install_nats
    install_node_modules
    ;;
  browser)
    install_browser
    ;;
  bench)
    install_bench
    ;;
  *)
    die "unknown target '$1': use 'core' (default), 'browser' or 'bench'"
    ;;
esac
