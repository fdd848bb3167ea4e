/**
 * The Pusher apps page's pure helpers (issue 41): where the dashboard's configured URLs put the
 * socket edge and the HTTP API, and the client and server snippets with an app's values filled in
 * (pusher-js, the `pusher` Node library, Laravel's `config/broadcasting.php` and Laravel Echo).
 * The option names are those of the packages' own type definitions (test/pusher.test.ts
 * type-checks every snippet against them).
 */
import type { DashboardConfig, PusherApp } from './api.js';

/** What a snippet says where the secret goes when it is not the one just shown. */
export const SECRET_PLACEHOLDER = 'YOUR_APP_SECRET';
/** Laravel's user channel, the template the create form suggests. */
export const USER_CHANNEL_EXAMPLE = 'private-App.Models.User.{id}';
/** pusher-js asks for a cluster even when `wsHost` names the server. */
const CLUSTER = 'mt1';

/** A host and port out of one of the dashboard's URLs; `known` false: a placeholder host. */
export interface Endpoint {
  host: string;
  port: number;
  /** A path prefix before `/app/…` (a proxy's), '' when the URL is an origin. */
  path: string;
  known: boolean;
}

/** The host, port (443 when the URL names none) and path prefix of `url`, or a placeholder. */
export function endpointOf(url: string | null | undefined, placeholder: string): Endpoint {
  if (url) {
    try {
      const u = new URL(url);
      const path = u.pathname.replace(/\/+$/, '');
      return { host: u.hostname, port: u.port ? Number(u.port) : 443, path, known: true };
    } catch {
      // Not a URL: the placeholder below, which the page flags.
    }
  }
  return { host: placeholder, port: 443, path: '', known: false };
}

/** The snippets' inputs: the app, its secret when just shown, the dashboard's URLs. */
export interface SnippetInput {
  app: Pick<PusherApp, 'app_id' | 'key' | 'user_channel'>;
  secret?: string | undefined;
  config: Pick<DashboardConfig, 'ingress_url' | 'ws_url'> | undefined;
}

export interface Snippet {
  id: 'pusher-js' | 'pusher-node' | 'laravel' | 'echo';
  title: string;
  code: string;
}

/** The socket edge (`wss://…/app/{key}`) and the HTTP API (`https://…/apps/{app_id}/…`). */
export function endpoints(config: SnippetInput['config']): { ws: Endpoint; http: Endpoint } {
  return {
    ws: endpointOf(config?.ws_url, 'ws.example.com'),
    http: endpointOf(config?.ingress_url, 'api.example.com'),
  };
}

/** The user channel of `userId` as a JS template literal (`\`private-App.Models.User.${userId}\``). */
function channelExpr(template: string, strip = ''): string {
  const [head = '', tail = ''] = template.slice(strip.length).split('{id}');
  return `\`${head}\${userId}${tail}\``;
}

function pusherJs({ app }: SnippetInput, ws: Endpoint): string {
  const listen = app.user_channel
    ? [
        '',
        "// Your app's user channel: durable too (its events are queued for the user).",
        `pusher.subscribe(${channelExpr(app.user_channel)}).bind('order-shipped', (data) => {`,
        '  console.log(data);',
        '});',
      ]
    : [];
  return [
    "import Pusher from 'pusher-js';",
    '',
    `const pusher = new Pusher('${app.key}', {`,
    `  cluster: '${CLUSTER}',`,
    `  wsHost: '${ws.host}',`,
    `  wssPort: ${ws.port},`,
    ...(ws.path ? [`  wsPath: '${ws.path}',`] : []),
    '  forceTLS: true,',
    "  enabledTransports: ['ws'],",
    '  // Your backend answers these, signing with the app secret (see the Node snippet).',
    "  userAuthentication: { endpoint: '/pusher/user-auth', transport: 'ajax' },",
    "  channelAuthorization: { endpoint: '/pusher/auth', transport: 'ajax' },",
    '});',
    '',
    '// Durable: what your server sends this user (sendToUser) arrives once signed in,',
    '// queued while the user is offline.',
    'pusher.signin();',
    "pusher.user.bind('order-shipped', (data) => {",
    '  console.log(data);',
    '});',
    ...listen,
  ].join('\n');
}

function pusherNode({ app, secret }: SnippetInput, http: Endpoint): string {
  return [
    "import Pusher from 'pusher';",
    '',
    'const pusher = new Pusher({',
    `  appId: '${app.app_id}',`,
    `  key: '${app.key}',`,
    `  secret: '${secret ?? SECRET_PLACEHOLDER}',`,
    `  host: '${http.host}',`,
    `  port: '${http.port}',`,
    '  useTLS: true,',
    '});',
    '',
    '// Durable: queued while the user is offline, delivered when they next sign in.',
    "await pusher.sendToUser(userId, 'order-shipped', { order: 42 });",
    '',
    '// POST /pusher/user-auth, for the logged-in user of the request:',
    'const signedIn = pusher.authenticateUser(socketId, { id: userId });',
    '// POST /pusher/auth, for a private channel this user may read:',
    'const authorized = pusher.authorizeChannel(socketId, channelName);',
  ].join('\n');
}

function laravel({ app, secret }: SnippetInput, ws: Endpoint, http: Endpoint): string {
  return [
    '# .env (BROADCAST_DRIVER before Laravel 11)',
    'BROADCAST_CONNECTION=pusher',
    `PUSHER_APP_ID=${app.app_id}`,
    `PUSHER_APP_KEY=${app.key}`,
    `PUSHER_APP_SECRET=${secret ?? SECRET_PLACEHOLDER}`,
    `PUSHER_HOST=${http.host}`,
    `PUSHER_PORT=${http.port}`,
    'PUSHER_SCHEME=https',
    `VITE_PUSHER_HOST=${ws.host}`,
    `VITE_PUSHER_PORT=${ws.port}`,
    '',
    "// config/broadcasting.php, under 'connections':",
    "'pusher' => [",
    "    'driver' => 'pusher',",
    "    'key' => env('PUSHER_APP_KEY'),",
    "    'secret' => env('PUSHER_APP_SECRET'),",
    "    'app_id' => env('PUSHER_APP_ID'),",
    "    'options' => [",
    `        'cluster' => '${CLUSTER}',`,
    "        'host' => env('PUSHER_HOST'),",
    `        'port' => env('PUSHER_PORT', ${http.port}),`,
    "        'scheme' => env('PUSHER_SCHEME', 'https'),",
    "        'useTLS' => true,",
    '    ],',
    '],',
  ].join('\n');
}

function echo({ app }: SnippetInput, ws: Endpoint): string {
  const listen = app.user_channel
    ? [
        "// Your app's user channel (Echo adds the private- prefix): notifications are durable.",
        `window.Echo.private(${channelExpr(app.user_channel, 'private-')}).notification((n) => {`,
        '  console.log(n);',
        '});',
      ]
    : [
        '// Durable: sendToUser reaches the signed-in user (Laravel signs at /broadcasting/user-auth).',
        'window.Echo.connector.pusher.signin();',
        "window.Echo.connector.pusher.user.bind('order-shipped', (data) => {",
        '  console.log(data);',
        '});',
      ];
  return [
    "import Echo from 'laravel-echo';",
    "import Pusher from 'pusher-js';",
    '',
    'window.Pusher = Pusher;',
    'window.Echo = new Echo({',
    "  broadcaster: 'pusher',",
    `  key: '${app.key}',`,
    `  cluster: '${CLUSTER}',`,
    `  wsHost: '${ws.host}',`,
    `  wssPort: ${ws.port},`,
    ...(ws.path ? [`  wsPath: '${ws.path}',`] : []),
    '  forceTLS: true,',
    "  enabledTransports: ['ws'],",
    '});',
    '',
    ...listen,
  ].join('\n');
}

/** The four snippets with the app's values (and its secret only when just shown). */
export function snippets(input: SnippetInput): Snippet[] {
  const { ws, http } = endpoints(input.config);
  return [
    { id: 'pusher-js', title: 'Browser: pusher-js', code: pusherJs(input, ws) },
    { id: 'pusher-node', title: 'Server: the pusher Node library', code: pusherNode(input, http) },
    {
      id: 'laravel',
      title: 'Laravel: .env and config/broadcasting.php',
      code: laravel(input, ws, http),
    },
    { id: 'echo', title: 'Laravel Echo', code: echo(input, ws) },
  ];
}

/** An app's user ids in words. */
export function userIdsText(mode: PusherApp['user_ids']): string {
  return mode === 'uuid' ? 'UUID v4 (the recipient as is)' : 'any id (mapped to a recipient)';
}
