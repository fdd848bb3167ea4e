# as_root CMD...: runs CMD as root, directly when this is root, else through sudo, which never
# prompts without a terminal (CI): it fails instead of hanging. Sourced, never executed; shared by
# scripts/deps.sh and scripts/lib/docker.sh.
as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif ! command -v sudo >/dev/null 2>&1; then
    printf "need root to run '%s' and sudo is not installed: run it as root\n" "$*" >&2
    exit 1
  elif [[ -n ${CI:-} || ! -t 0 ]]; then
    sudo -n "$@"
  else
    sudo "$@"
  fi
}
