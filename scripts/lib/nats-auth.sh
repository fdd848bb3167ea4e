# NATS users for a local stack (make dev): deploy/nats/users.conf's users with passwords made
# once per checkout, and the auth callout's key. Kept in $1/nats-auth.env (mode 600); never printed.
#   nats_auth_ensure DIR   writes DIR/nats-auth.env when missing, then reads it into this shell
#                          (not exported: each process is given only its own secret); sets
#                          NATS_SERVER_ENV, the NAME=VALUE words nats-server's config reads
#   nats_password NAME     a user's password (admin, auth, ingress-api, ...)

NATS_AUTH_USERS=(admin auth ingress-api socket-edge retention status)

nats_auth_ensure() {
  local file=$1/nats-auth.env u name
  if [[ ! -f $file ]]; then
    (
      umask 077
      {
        for u in "${NATS_AUTH_USERS[@]}"; do
          name=HERALD_NATS_PASSWORD_$(tr 'a-z-' 'A-Z_' <<<"$u")
          # A letter first: nats-server parses the value as config, and a leading digit reads as a number.
          printf '%s=hn%s\n' "$name" "$(openssl rand -hex 24)"
        done
        # The callout's account key: its public half is nats-server's issuer, its seed auth's.
        node --input-type=module -e '
          import { createAccount } from "nkeys.js";
          const a = createAccount();
          console.log(`HERALD_NATS_CALLOUT_ISSUER=${a.getPublicKey()}`);
          console.log(`NATS_CALLOUT_SEED=${new TextDecoder().decode(a.getSeed())}`);'
      } >"$file.tmp"
      mv "$file.tmp" "$file"
    )
  fi
  local k v
  NATS_SERVER_ENV=()
  while IFS='=' read -r k v; do
    printf -v "$k" '%s' "$v"
    [[ $k == NATS_CALLOUT_SEED ]] || NATS_SERVER_ENV+=("$k=$v")
  done <"$file"
}

nats_password() {
  local name=HERALD_NATS_PASSWORD_$(tr 'a-z-' 'A-Z_' <<<"$1")
  printf '%s' "${!name}"
}
