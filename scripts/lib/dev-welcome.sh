# What `make dev` tells once the stack is up: the URLs, the demo Test key and recipient, and how
# to send and receive a first event. Sourced by scripts/dev.sh, never executed; print_welcome
# reads dev.sh's variables (BASE_URL, WS_URL, NATS_URL, EXAMPLE_EMAIL, the HERALD_* of
# .data/demo.env).

print_welcome() {
  local connect_url body
  connect_url="$WS_URL/ws/connect?api_key=$HERALD_TEST_KEY&recipient=$HERALD_RECIPIENT&client=mobile"
  body="{\"recipient\":\"$HERALD_RECIPIENT\",\"payload\":{\"hello\":\"world\"},\"api_key\":\"$HERALD_TEST_KEY\",\"client\":\"mobile\"}"

  cat <<EOF

Herald is running. Ctrl-C stops it; logs are in .data/logs/.

HERALD_BASE_URL=$BASE_URL
HERALD_WS_URL=$WS_URL
HERALD_TEST_KEY=$HERALD_TEST_KEY
HERALD_ACCOUNT_ID=$HERALD_ACCOUNT_ID
HERALD_DASHBOARD_URL=https://localhost:8445/
HERALD_NATS_URL=$NATS_URL

The dashboard (sign up, keys, plan, delivery status, debug console) is at HERALD_DASHBOARD_URL once
the browser trusts .data/tls/ca.crt. There is no mail server: a password reset token comes from
  npm run -s admin -- account reset-token --email you@example.com

A backend that dispatches over NATS (request rt.dispatch.<account>) at HERALD_NATS_URL logs in
with a NATS user of its account's own, allowed nothing else (its password is shown once):
  npm run -s admin -- nats-user create --account $HERALD_ACCOUNT_ID

The Test key expires at $HERALD_TEST_KEY_EXPIRES_AT (make dev issues a new one then).

The React notification bell, live in a page of its own: run make example in another terminal
(clients/react/example/README.md). It has an account of its own, $EXAMPLE_EMAIL.
Paste the four lines above into a shell (or: . .data/demo.env), then

Send an event to recipient $HERALD_RECIPIENT (202 while it is offline: queued; 200 once connected):
  curl --cacert .data/tls/ca.crt -H 'content-type: application/json' -d '$body' \$HERALD_BASE_URL/notify

Receive events (queued ones arrive on connect, then live ones):
  NODE_EXTRA_CA_CERTS=.data/tls/ca.crt node -e "new (require('ws'))(process.argv[1]).on('message', (m) => console.log(String(m)))" '$connect_url'

Or in the devtools console of any https page, once the browser trusts .data/tls/ca.crt:
  const ws = new WebSocket('$connect_url'); ws.onmessage = (e) => console.log(JSON.parse(e.data));

Or with the SDK (@herald/sdk; in Node: NODE_EXTRA_CA_CERTS=.data/tls/ca.crt, and ws on Node 20/21).
Both URLs are needed: notify goes to ingress-api, sockets to socket-edge:
  import { Herald } from '@herald/sdk';
  const herald = new Herald({ apiKey: '$HERALD_TEST_KEY', client: 'mobile', baseUrl: '$BASE_URL', wsUrl: '$WS_URL' });
  herald.onError((error) => console.error(error.kind, error.code, error.message));
  herald.onConnectionChange((state) => console.log(state));
  herald.subscribe('$HERALD_RECIPIENT').listen((payload) => console.log(payload));

EOF
  return 0
}
