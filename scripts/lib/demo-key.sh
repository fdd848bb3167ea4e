# The demo account and its Test key of `make compose-up` (scripts/lib/compose-stack.sh), made and
# kept as `make dev` keeps its own. Sourced, never executed. The caller defines:
#
#   admin ARGS...            runs the admin CLI (services/auth admin) with ARGS
#   demo_account_by_email E  prints the id of the account with email E (one read of auth's
#                            table; the admin CLI has no lookup by email), or nothing
#   say / die                its own messages
#
# demo_key_ensure FILE LOG loads FILE (a sourceable demo.env) when it exists, makes the demo
# account and a Test key when they are missing, gone or about to expire, and writes FILE back
# (mode 600). Afterwards HERALD_ACCOUNT_ID, HERALD_TEST_KEY, HERALD_TEST_KEY_ID,
# HERALD_TEST_KEY_EXPIRES_AT and HERALD_RECIPIENT are set. LOG receives the CLI's errors.

DEMO_EMAIL=${DEMO_EMAIL:-demo@herald.local}
# A stored Test key is reused while it has at least this long to live (Test keys live 4 hours).
KEY_MIN_REMAINING_MS=$((10 * 60 * 1000))

# The admin CLI prints one JSON object on stdout with --json, its errors on stderr.
admin_json() {
  local out
  out=$(admin "$@" --json 2>"$DEMO_ADMIN_LOG") || {
    sed 's/^/  /' "$DEMO_ADMIN_LOG" >&2
    return 1
  }
  printf '%s\n' "$out"
}
json_field() { node -e 'const v = JSON.parse(process.argv[1])[process.argv[2]]; if (v == null) process.exit(1); console.log(v)' "$1" "$2"; }

demo_key_ensure() {
  local file=$1 keys='' out k v
  DEMO_ADMIN_LOG=$2
  HERALD_ACCOUNT_ID='' HERALD_TEST_KEY='' HERALD_TEST_KEY_ID='' HERALD_TEST_KEY_EXPIRES_AT='' HERALD_RECIPIENT=''
  if [[ -f $file ]]; then
    while IFS='=' read -r k v; do
      case $k in
        HERALD_ACCOUNT_ID | HERALD_TEST_KEY | HERALD_TEST_KEY_ID | HERALD_TEST_KEY_EXPIRES_AT | HERALD_RECIPIENT) printf -v "$k" '%s' "$v" ;;
      esac
    done <"$file"
  fi

  if [[ -n $HERALD_ACCOUNT_ID ]] && ! keys=$(admin_json key list --account "$HERALD_ACCOUNT_ID" 2>/dev/null); then
    say "the stored demo account $HERALD_ACCOUNT_ID is gone from the database: making a new one"
    HERALD_ACCOUNT_ID=''
    keys=''
  fi
  if [[ -z $HERALD_ACCOUNT_ID ]]; then
    say "creating the demo account ($DEMO_EMAIL)"
    if out=$(admin_json account create --email "$DEMO_EMAIL" 2>/dev/null); then
      HERALD_ACCOUNT_ID=$(json_field "$out" id) || die "admin account create printed no id: $out"
    else
      # The database outlived the demo file: the address is taken by the demo account made then.
      HERALD_ACCOUNT_ID=$(demo_account_by_email "$DEMO_EMAIL" 2>/dev/null || true)
      [[ -n $HERALD_ACCOUNT_ID ]] || { sed 's/^/  /' "$DEMO_ADMIN_LOG" >&2; die 'admin account create failed; its message is above'; }
      keys=$(admin_json key list --account "$HERALD_ACCOUNT_ID" 2>/dev/null || true)
    fi
    HERALD_TEST_KEY='' HERALD_TEST_KEY_ID=''
  fi
  [[ -n $HERALD_RECIPIENT ]] || HERALD_RECIPIENT=$(node -e 'console.log(crypto.randomUUID())')

  if ! demo_key_usable "$keys"; then
    # One Test key per account, ever: a new account gets one; after that, support's reset-test
    # (which revokes the old value) is the only way to a fresh 4-hour key.
    if [[ -n $keys ]] && node -e 'process.exit(JSON.parse(process.argv[1]).keys.some((k) => k.kind === "test") ? 0 : 1)' "$keys"; then
      say 'resetting the demo account Test key (the stored one expired or was revoked)'
      out=$(admin_json key reset-test --account "$HERALD_ACCOUNT_ID") ||
        die 'admin key reset-test failed; its message is above'
    else
      say 'creating a Test key for the demo account'
      out=$(admin_json key create --account "$HERALD_ACCOUNT_ID" --kind test --client mobile) ||
        die 'admin key create failed; its message is above'
    fi
    HERALD_TEST_KEY=$(json_field "$out" key) || die "admin key create printed no key: $out"
    HERALD_TEST_KEY_ID=$(json_field "$out" id) || die "admin key create printed no id: $out"
    HERALD_TEST_KEY_EXPIRES_AT=$(json_field "$out" expires_at) || die "admin key create printed no expires_at: $out"
  fi
}

# Reuse the stored Test key while the database says it is neither revoked nor about to expire.
demo_key_usable() {
  local keys=$1
  [[ -n $HERALD_TEST_KEY && -n $HERALD_TEST_KEY_ID && -n $keys ]] || return 1
  node -e '
    const [keys, id, margin] = process.argv.slice(1);
    const k = JSON.parse(keys).keys.find((k) => k.id === id);
    const ok = k && !k.revoked_at && (k.expires_at === null || Date.parse(k.expires_at) - Date.now() > Number(margin));
    process.exit(ok ? 0 : 1);
  ' "$keys" "$HERALD_TEST_KEY_ID" "$KEY_MIN_REMAINING_MS"
}

# demo_env_write FILE BASE_URL WS_URL: the sourceable demo file, readable by its owner only.
demo_env_write() {
  (
    umask 077
    cat >"$1" <<DEMO
HERALD_BASE_URL=$2
HERALD_WS_URL=$3
HERALD_ACCOUNT_ID=$HERALD_ACCOUNT_ID
HERALD_TEST_KEY=$HERALD_TEST_KEY
HERALD_TEST_KEY_ID=$HERALD_TEST_KEY_ID
HERALD_TEST_KEY_EXPIRES_AT=$HERALD_TEST_KEY_EXPIRES_AT
HERALD_RECIPIENT=$HERALD_RECIPIENT
DEMO
  )
}
