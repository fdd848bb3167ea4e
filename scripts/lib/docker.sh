# Herald's container machinery, shared by every script that runs a compose stack (compose.sh,
# compose-lint.sh, test-deploy.sh): a Docker engine, the compose v2 plugin, and the base images,
# each installed, started or built only when missing. Sourced, never executed.
#
#   docker_engine_ensure        install Debian's docker.io when there is no engine; start dockerd
#                               (root, background, own log) when none answers
#   docker_engine_started_here  true while the dockerd that docker_engine_ensure started runs
#   docker_engine_stop          stop the dockerd this machinery started (no-op otherwise)
#   compose_plugin_ensure       the docker compose plugin at COMPOSE_VERSION or newer, built from
#                               the Go module proxy and installed as a CLI plugin when missing
#   compose_cmd ARGS...         `docker compose ARGS`, or the plugin alone without a docker CLI
#   base_image_ensure IMAGE DOCKERFILE CONTEXT RELEASE
#                               IMAGE present locally, pulled, or built from DOCKERFILE as a local
#                               stand-in under the same name:tag, on debian:RELEASE-slim
#   debian_image_ensure RELEASE debian:RELEASE-slim present, pulled, or made with debootstrap
#   herald_base_images_ensure   the three base images of deploy/ (node, nats, postgres)
#   go_static_tool PKG@VERSION  a static build of a Go command, made once; prints its path
#   record_built_image IMAGE    adds IMAGE to the list of what was built here (built_images_file)
#
# State (dockerd's pid and log, what was built here) lives in HERALD_DOCKER_STATE
# (.data/docker by default).

DOCKER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERALD_DOCKER_STATE=${HERALD_DOCKER_STATE:-$DOCKER_ROOT/.data/docker}
# The compose plugin release this machinery builds, and the oldest one it accepts when present.
COMPOSE_VERSION=2.40.3
# How long a `docker pull` may try before the base image is built locally instead.
HERALD_PULL_TIMEOUT_S=${HERALD_PULL_TIMEOUT_S:-60}
# Most time dockerd may take to answer after it is started.
DOCKERD_START_TIMEOUT_S=${DOCKERD_START_TIMEOUT_S:-60}

docker_say() { printf 'docker: %s\n' "$*" >&2; }
docker_die() {
  docker_say "$*"
  exit 1
}

# shellcheck source=as-root.sh
. "$DOCKER_ROOT/scripts/lib/as-root.sh"

docker_apt_install() {
  command -v apt-get >/dev/null 2>&1 ||
    docker_die "missing $*, and this is not Debian/Ubuntu (no apt-get): install a Docker engine (20.10 or newer) and debootstrap yourself, then rerun"
  docker_say "installing $* (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  if [[ -z ${DOCKER_APT_UPDATED:-} ]]; then
    as_root apt-get update -qq
    DOCKER_APT_UPDATED=1
  fi
  as_root apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# The engine answers when `docker version` can read its server version.
docker_answers() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

docker_engine_started_here() {
  local pid
  [[ -f $HERALD_DOCKER_STATE/dockerd.pid ]] || return 1
  pid=$(<"$HERALD_DOCKER_STATE/dockerd.pid")
  # Still that dockerd: a pid file can outlive its process, and the pid be reused.
  [[ $pid =~ ^[0-9]+$ && $(cat "/proc/$pid/comm" 2>/dev/null) == dockerd ]]
}

docker_engine_ensure() {
  local missing=() pid i
  command -v docker >/dev/null 2>&1 || missing+=(docker.io)
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  if [[ ${#missing[@]} -gt 0 ]] && ! docker_answers; then
    docker_apt_install docker.io
  fi
  docker_answers && return 0
  [[ -S /var/run/docker.sock || -n ${DOCKER_HOST:-} ]] &&
    docker_say "a Docker socket exists but no engine answers on it: starting dockerd"
  command -v dockerd >/dev/null 2>&1 || docker_die 'dockerd is not installed: install a Docker engine (Debian/Ubuntu: apt-get install docker.io)'
  mkdir -p "$HERALD_DOCKER_STATE"
  docker_say "starting dockerd (log: $HERALD_DOCKER_STATE/dockerd.log)"
  # setsid: a Ctrl-C in the terminal that started it does not reach the engine.
  if [[ $(id -u) -eq 0 ]]; then
    setsid dockerd </dev/null >"$HERALD_DOCKER_STATE/dockerd.log" 2>&1 &
  else
    as_root setsid dockerd </dev/null >"$HERALD_DOCKER_STATE/dockerd.log" 2>&1 &
  fi
  pid=$!
  echo "$pid" >"$HERALD_DOCKER_STATE/dockerd.pid"
  for ((i = 0; i < DOCKERD_START_TIMEOUT_S * 4; i++)); do
    if docker_answers; then
      # dockerd's own pid file: $! may be a wrapper (sudo, a forking setsid).
      [[ -s /var/run/docker.pid ]] && pid=$(<"/var/run/docker.pid")
      echo "$pid" >"$HERALD_DOCKER_STATE/dockerd.pid"
      docker_say "dockerd $(docker version --format '{{.Server.Version}}') answers (pid $pid)"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  tail -n 20 "$HERALD_DOCKER_STATE/dockerd.log" >&2 || true
  docker_die "dockerd did not answer within ${DOCKERD_START_TIMEOUT_S}s; its log is above"
}

docker_engine_stop() {
  local pid i
  docker_engine_started_here || return 0
  pid=$(<"$HERALD_DOCKER_STATE/dockerd.pid")
  docker_say "stopping the dockerd started here (pid $pid)"
  as_root kill -TERM "$pid" 2>/dev/null || true
  # dockerd stops its containers first: up to 30 s.
  for ((i = 0; i < 120; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  if kill -0 "$pid" 2>/dev/null; then docker_say "dockerd (pid $pid) is still stopping after 30s"; fi
  rm -f "$HERALD_DOCKER_STATE/dockerd.pid"
  return 0
}

# ---- compose v2 plugin ------------------------------------------------------------------------

# The version of the compose plugin the docker CLI runs, e.g. 2.40.3 (empty when none).
compose_plugin_version() {
  { compose_cmd version --short 2>/dev/null || true; } | sed -nE 's/^v?([0-9]+\.[0-9]+\.[0-9]+).*/\1/p'
}

# `docker compose`, or the plugin run on its own where there is no docker CLI yet (make lint
# needs only `config`, no engine).
compose_cmd() {
  if command -v docker >/dev/null 2>&1; then
    docker compose "$@"
  elif [[ -x $(compose_plugin_dir)/docker-compose ]]; then
    "$(compose_plugin_dir)/docker-compose" "$@"
  else
    return 127
  fi
}

# Where the CLI looks for plugins: system-wide as root, the user's own folder otherwise.
compose_plugin_dir() {
  if [[ $(id -u) -eq 0 ]]; then echo /usr/local/lib/docker/cli-plugins; else echo "$HOME/.docker/cli-plugins"; fi
}

version_ge() { [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" == "$2" ]]; }

compose_plugin_ensure() {
  local have go moddir work dir
  have=$(compose_plugin_version)
  if [[ -n $have ]] && version_ge "$have" "$COMPOSE_VERSION"; then return 0; fi
  go=$(command -v go || { [[ -x /usr/local/go/bin/go ]] && echo /usr/local/go/bin/go; } || true)
  [[ -n $go ]] ||
    docker_die "docker compose ${have:+$have is older than $COMPOSE_VERSION}${have:-is missing}: install the compose plugin $COMPOSE_VERSION or newer (https://docs.docker.com/compose/install/), or Go, to build it"
  docker_say "building the docker compose plugin v$COMPOSE_VERSION from the Go module proxy (once; minutes)"
  # `go install …/cmd@v…` is refused (compose's go.mod has exclude directives): download the
  # module, then build it as the main module in a writable copy.
  moddir=$("$go" mod download -json "github.com/docker/compose/v2@v$COMPOSE_VERSION" |
    sed -nE 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')
  [[ -n $moddir && -d $moddir ]] || docker_die "go mod download of github.com/docker/compose/v2@v$COMPOSE_VERSION failed"
  work=$(mktemp -d)
  cp -r "$moddir/." "$work/"
  chmod -R u+w "$work"
  (cd "$work" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false "$go" build -trimpath \
    -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=v$COMPOSE_VERSION" \
    -o "$work/docker-compose" ./cmd) || {
    rm -rf "$work"
    docker_die "building the compose plugin failed (output above)"
  }
  dir=$(compose_plugin_dir)
  mkdir -p "$dir"
  install -m 755 "$work/docker-compose" "$dir/docker-compose.new"
  mv -f "$dir/docker-compose.new" "$dir/docker-compose"
  rm -rf "$work"
  have=$(compose_plugin_version)
  [[ $have == "$COMPOSE_VERSION" ]] || docker_die "installed $dir/docker-compose, but docker compose reports '${have:-nothing}'"
  docker_say "docker compose $have installed in $dir"
}

# ---- base images ------------------------------------------------------------------------------

image_present() { docker image inspect "$1" >/dev/null 2>&1; }

# Pull IMAGE when a registry answers in time; false otherwise (no registry, offline, refused).
image_pull() {
  mkdir -p "$HERALD_DOCKER_STATE"
  timeout "$HERALD_PULL_TIMEOUT_S" docker pull -q "$1" >>"$HERALD_DOCKER_STATE/pull.log" 2>&1 && return 0
  docker_say "cannot pull $1 (no registry answers; see $HERALD_DOCKER_STATE/pull.log): building a local stand-in"
  return 1
}

# Records an image this machinery built, so a test run can remove exactly what it made. The list
# is HERALD_BUILT_IMAGES_FILE when set (.ci/run: one list for the runs that share the images).
built_images_file() { echo "${HERALD_BUILT_IMAGES_FILE:-$HERALD_DOCKER_STATE/built-images}"; }
record_built_image() {
  mkdir -p "$(dirname "$(built_images_file)")"
  printf '%s\n' "$1" >>"$(built_images_file)"
}

# The Debian mirror debootstrap uses: HERALD_DEBIAN_MIRROR, else this host's own apt source for
# Debian, else debootstrap's default.
debian_mirror() {
  if [[ -n ${HERALD_DEBIAN_MIRROR:-} ]]; then
    echo "$HERALD_DEBIAN_MIRROR"
    return 0
  fi
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
    sed -nE 's#^(deb[[:space:]]+(\[[^]]*\][[:space:]]+)?|URIs:[[:space:]]*)(https?://[^[:space:]]+/debian)/?([[:space:]].*)?$#\3#p' |
    head -n 1
}

# debian:RELEASE-slim: present, pulled, or a debootstrap --variant=minbase root filesystem
# imported as that image.
debian_image_ensure() {
  local release=$1 image="debian:$1-slim" rootfs mirror
  image_present "$image" && return 0
  image_pull "$image" && return 0
  command -v debootstrap >/dev/null 2>&1 || docker_apt_install debootstrap
  mirror=$(debian_mirror)
  rootfs=$(mktemp -d)
  docker_say "debootstrap $release (minbase${mirror:+ from $mirror}) for $image"
  if ! as_root debootstrap --variant=minbase "$release" "$rootfs" ${mirror:+"$mirror"} \
    >"$HERALD_DOCKER_STATE/debootstrap-$release.log" 2>&1; then
    tail -n 20 "$HERALD_DOCKER_STATE/debootstrap-$release.log" >&2
    as_root rm -rf "$rootfs"
    docker_die "debootstrap $release failed; its log is above"
  fi
  as_root rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  as_root tar -C "$rootfs" -c . |
    docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' - "$image" >/dev/null
  as_root rm -rf "$rootfs"
  record_built_image "$image"
  docker_say "built $image (stand-in)"
}

# base_image_ensure IMAGE DOCKERFILE CONTEXT DEBIAN_RELEASE: IMAGE present, pulled, or built as a
# local stand-in from DOCKERFILE (whose DEBIAN_IMAGE argument gets debian:DEBIAN_RELEASE-slim).
# Stand-ins are built with the engine's classic builder: they need nothing BuildKit adds.
base_image_ensure() {
  local image=$1 dockerfile=$2 context=$3 release=$4
  image_present "$image" && return 0
  image_pull "$image" && return 0
  debian_image_ensure "$release"
  docker_say "building a stand-in for $image ($(basename "$dockerfile"), Debian $release)"
  DOCKER_BUILDKIT=0 docker build -q -f "$dockerfile" --build-arg "DEBIAN_IMAGE=debian:$release-slim" \
    --label "org.opencontainers.image.description=local stand-in for $image, built by Herald's scripts/lib/docker.sh" \
    -t "$image" "$context" >"$HERALD_DOCKER_STATE/standin-build.log" 2>&1 || {
    tail -n 30 "$HERALD_DOCKER_STATE/standin-build.log" >&2
    docker_die "building the stand-in for $image failed; the build's output is above"
  }
  record_built_image "$image"
  docker_say "built $image (stand-in)"
}

# The three base images of deploy/docker-compose.yml and deploy/Dockerfile. The nats stand-in
# carries the pinned nats-server that `make deps` builds (static, so it runs on any base).
herald_base_images_ensure() {
  local node_image=${HERALD_NODE_IMAGE:-node:20-slim} postgres_image nats_version nats_bin context
  # shellcheck source=nats-bin.sh
  . "$DOCKER_ROOT/scripts/lib/nats-bin.sh"
  nats_version=$(nats_pinned_version)
  # The compose file names the Postgres image; this only makes it exist.
  postgres_image=$(sed -nE 's/^[[:space:]]*image:[[:space:]]*(postgres:[^[:space:]]+).*/\1/p' \
    "$DOCKER_ROOT/deploy/docker-compose.yml" | head -n 1)
  [[ -n $postgres_image ]] || docker_die 'deploy/docker-compose.yml names no postgres image'
  base_image_ensure "$node_image" "$DOCKER_ROOT/deploy/base/node.Dockerfile" "$DOCKER_ROOT/deploy/base" trixie
  base_image_ensure "$postgres_image" "$DOCKER_ROOT/deploy/base/postgres.Dockerfile" "$DOCKER_ROOT/deploy/base" bookworm
  image_present "nats:$nats_version-alpine" && return 0
  nats_bin=$HERALD_BIN_DIR/nats-server
  if [[ ! -x $nats_bin || $(nats_server_version_of "$nats_bin") != "$nats_version" ]] ||
    grep -qa 'ld-linux' "$nats_bin"; then
    nats_bin=$(go_static_tool "github.com/nats-io/nats-server/v2@v$nats_version")
  fi
  context=$(mktemp -d)
  cp "$nats_bin" "$context/nats-server"
  cp "$DOCKER_ROOT/deploy/base/nats-entrypoint.sh" "$context/"
  base_image_ensure "nats:$nats_version-alpine" "$DOCKER_ROOT/deploy/base/nats.Dockerfile" "$context" bookworm
  rm -rf "$context"
}

# A static build of a Go command (MODULE/PATH@VERSION) in the state folder, made once; prints its
# path. Static, so it runs in any container (the backup scripts run the nats CLI in one).
go_static_tool() {
  local pkg=$1 dir go
  dir=$HERALD_DOCKER_STATE/go-tools/$(printf '%s' "$pkg" | tr '/@' '__')
  if [[ ! -x $dir/$(basename "${pkg%@*}") ]]; then
    go=$(command -v go || { [[ -x /usr/local/go/bin/go ]] && echo /usr/local/go/bin/go; } || true)
    [[ -n $go ]] || docker_die "Go is not installed: it is needed to build $pkg (https://go.dev/dl)"
    docker_say "building $pkg (go install, static)"
    GOBIN=$dir CGO_ENABLED=0 GOFLAGS=-buildvcs=false "$go" install "$pkg" >&2 ||
      docker_die "go install of $pkg failed (output above)"
  fi
  echo "$dir/$(basename "${pkg%@*}")"
}
