# Which Centrifugo `make bench` measures Herald against (issue 31): the one pinned version, built
# with `go install` into the project's .bin/ by `make deps` when Go is present. The bench reads the
# pin from this file too (bench/src/env/centrifugo-binary.ts). Sourced, never executed.
#
#   CENTRIFUGO_VERSION      the pinned release
#   centrifugo_bin          prints the centrifugo to run, or nothing when none is at the pin

CENTRIFUGO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERALD_BIN_DIR=${HERALD_BIN_DIR:-$CENTRIFUGO_ROOT/.bin}
CENTRIFUGO_VERSION=6.9.1
CENTRIFUGO_MODULE=github.com/centrifugal/centrifugo/v6

# A `go install` build reports version 0.0.0 unless the release version is stamped in, as
# Centrifugo's own release build does.
CENTRIFUGO_LDFLAGS="-X $CENTRIFUGO_MODULE/internal/build.Version=$CENTRIFUGO_VERSION"

# The version a centrifugo binary reports, e.g. "6.9.1" (empty when it does not run).
centrifugo_version_of() {
  "$1" version 2>/dev/null | sed -nE 's/^Centrifugo v?([0-9]+\.[0-9]+\.[0-9]+).*/\1/p'
}

centrifugo_bin() {
  local candidate="$HERALD_BIN_DIR/centrifugo"
  if [[ -x $candidate && $(centrifugo_version_of "$candidate") == "$CENTRIFUGO_VERSION" ]]; then
    printf '%s\n' "$candidate"
  fi
  return 0
}
