# Shared by scripts/dev.sh and scripts/example.sh: the demo accounts `make dev` makes and the Test
# keys they hold, through the admin CLI's --json output. Sourced after dev-common.sh, never
# executed. The caller exports DATABASE_URL and NATS_URL (those of .data/dev.env), and dev.sh
# (through lib/dev-stores.sh) defines psql_q for the one lookup the admin CLI has no command for.

# A stored Test key is reused while it has at least this long to live (Test keys live 4 hours).
KEY_MIN_REMAINING_MS=$((10 * 60 * 1000))

admin() { npm run -s admin -- "$@"; }

# load_env FILE NAME...: sets each NAME that FILE (NAME=value lines) holds; a missing file sets none.
load_env() {
  local file=$1 k v
  shift
  [[ -f $file ]] || return 0
  while IFS='=' read -r k v; do
    [[ " $* " == *" $k "* ]] && printf -v "$k" '%s' "$v"
  done <"$file"
  return 0
}

# The admin CLI prints one JSON object on stdout with --json, its errors on stderr.
admin_json() {
  local out
  out=$(admin "$@" --json 2>"$LOGS/admin.log") || {
    sed 's/^/  /' "$LOGS/admin.log" >&2
    return 1
  }
  printf '%s\n' "$out"
}

json_field() { node -e 'const v = JSON.parse(process.argv[1])[process.argv[2]]; if (v == null) process.exit(1); console.log(v)' "$1" "$2"; }

# ensure_account EMAIL STORED_ID: sets ACCOUNT_ID to the stored account while the database has it,
# else to a new account with that email, and ACCOUNT_KEYS to its `key list` (empty when new).
ensure_account() {
  local email=$1 stored=$2 out
  ACCOUNT_ID='' ACCOUNT_KEYS=''
  if [[ -n $stored ]]; then
    if ACCOUNT_KEYS=$(admin_json key list --account "$stored" 2>/dev/null); then
      ACCOUNT_ID=$stored
      return 0
    fi
    say "the stored account $stored ($email) is gone from the database: making a new one"
  fi
  say "creating the account $email"
  if out=$(admin_json account create --email "$email" 2>/dev/null); then
    ACCOUNT_ID=$(json_field "$out" id) || die "admin account create printed no id: $out"
  else
    # The database outlived .data/: the address is taken by the account made then.
    ACCOUNT_ID=$(psql_q herald "select id from accounts where email = '$email'" 2>/dev/null || true)
    [[ -n $ACCOUNT_ID ]] || { sed 's/^/  /' "$LOGS/admin.log" >&2; die 'admin account create failed; its message is above'; }
    ACCOUNT_KEYS=$(admin_json key list --account "$ACCOUNT_ID") || die 'admin key list failed; its message is above'
  fi
  return 0
}

# ensure_test_key ACCOUNT CLIENT DOMAIN STORED_KEY STORED_KEY_ID: sets TEST_KEY, TEST_KEY_ID and
# TEST_KEY_EXPIRES_AT: the stored key while the database says it is neither revoked nor about to
# expire; else support's reset (one Test key per account, ever: a reset revokes the old value and
# keeps its client and domain); else, for an account that never had one, a new key. ACCOUNT_KEYS,
# when set, is the account's `key list` (ensure_account's), saving one admin call.
ensure_test_key() {
  local account=$1 client=$2 domain=$3 stored=$4 stored_id=$5 out
  local keys=${ACCOUNT_KEYS:-}
  [[ -n $keys ]] || keys=$(admin_json key list --account "$account") || die 'admin key list failed; its message is above'
  TEST_KEY=$stored TEST_KEY_ID=$stored_id TEST_KEY_EXPIRES_AT=''
  if [[ -n $stored && -n $stored_id ]] &&
    TEST_KEY_EXPIRES_AT=$(node -e '
      const [keys, id, margin] = process.argv.slice(1);
      const k = JSON.parse(keys).keys.find((k) => k.id === id);
      const ok = k && !k.revoked_at && (k.expires_at === null || Date.parse(k.expires_at) - Date.now() > Number(margin));
      if (!ok) process.exit(1);
      console.log(k.expires_at ?? "");
    ' "$keys" "$stored_id" "$KEY_MIN_REMAINING_MS"); then
    return 0
  fi
  if node -e 'process.exit(JSON.parse(process.argv[1]).keys.some((k) => k.kind === "test") ? 0 : 1)' "$keys"; then
    say "resetting the Test key of account $account (the stored one expired, was revoked or is unknown here)"
    out=$(admin_json key reset-test --account "$account") || die 'admin key reset-test failed; its message is above'
  else
    say "creating a Test key for account $account"
    local args=(key create --account "$account" --kind test --client "$client")
    [[ -z $domain ]] || args+=(--domain "$domain")
    out=$(admin_json "${args[@]}") || die 'admin key create failed; its message is above'
  fi
  TEST_KEY=$(json_field "$out" key) || die "admin printed no key: $out"
  TEST_KEY_ID=$(json_field "$out" id) || die "admin printed no key id: $out"
  TEST_KEY_EXPIRES_AT=$(json_field "$out" expires_at) || die "admin printed no expires_at: $out"
  return 0
}
