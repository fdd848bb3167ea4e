// The direction of the house, written down and checked by `make lint` (dependency-cruiser):
// no file imports another in a circle, and every package imports only the packages below it.
// docs/architecture.md draws the same arrows. Tests are left out: they may reach anything they
// test, and the test kit.

/** What each package may import of Herald's own, besides itself. */
const BELOW = {
  proto: [],
  'lib/nats': ['proto'],
  'lib/kit': ['proto'],
  'lib/payments': [],
  'lib/outbound': [],
  'lib/testkit': [],
  'lib/queue': ['proto', 'lib/nats'],
  'lib/access': ['proto', 'lib/kit', 'lib/nats'],
  'lib/status-client': ['proto', 'lib/nats'],
  'clients/sdk': ['proto'],
  'clients/react': ['clients/sdk'],
  'clients/dashboard': ['proto', 'clients/sdk'],
  bench: ['proto', 'lib/kit', 'lib/nats', 'lib/queue', 'lib/access', 'lib/testkit'],
};
/** What every service may import: the contract and the libraries, never another service. */
const SERVICES_MAY = [
  'proto',
  'lib/kit',
  'lib/nats',
  'lib/queue',
  'lib/access',
  'lib/status-client',
  'lib/payments',
  'lib/outbound',
];
const HERALD = '^(proto|lib|services|clients|bench)/';

/**
 * The socket edge's wings (services/socket-edge/src/<wing>/) and what each may import of the edge
 * besides itself: pusher/, admit/ → session/ → queue/, inbox/ → feed/ → socket/ (its README draws the
 * same), every wing below its own; queue/ and inbox/ stand side by side and never import each
 * other. The wiring (edge.ts, service.ts) stands above them all; metrics.ts is a leaf they share.
 */
const EDGE = 'services/socket-edge/src';
const EDGE_WINGS = {
  socket: [],
  feed: ['socket/'],
  queue: ['feed/', 'socket/', 'metrics.ts'],
  inbox: ['feed/', 'socket/', 'metrics.ts'],
  session: ['queue/', 'inbox/', 'feed/', 'socket/', 'metrics.ts'],
  admit: ['session/', 'queue/', 'inbox/', 'feed/', 'socket/', 'metrics.ts'],
  // The Pusher door: its own admission over admit/'s parts, members joining session/'s sessions.
  pusher: ['admit/', 'session/', 'socket/', 'metrics.ts'],
};
/** A folder (`feed/`) matches what is under it; a file (`metrics.ts`) only itself. */
const edgePart = (part) => (part.endsWith('/') ? part : `${part.replace('.', '\\.')}$`);
const edgeWings = Object.entries(EDGE_WINGS).map(([wing, may]) => ({
  name: `socket-edge ${wing}/ imports ${may.length > 0 ? `only ${may.join(', ')}` : 'nothing else of the edge'}`,
  comment: "The edge's wings import downwards only, so its README cannot drift from the code.",
  severity: 'error',
  from: { path: `^${EDGE}/${wing}/` },
  to: { path: `^${EDGE}/`, pathNot: `^${EDGE}/(${[`${wing}/`, ...may].map(edgePart).join('|')})` },
}));

const onlyBelow = Object.entries(BELOW).map(([pkg, below]) => ({
  name: `${pkg} imports only ${below.join(', ') || 'no other package of Herald'}`,
  severity: 'error',
  from: { path: `^${pkg}/` },
  to: { path: HERALD, pathNot: `^(${[pkg, ...below].join('|')})/` },
}));

/**
 * auth's wings and the wings each may import. A wing plugs in from above (service.ts mounts its
 * routes, admin/commands.ts lists its command group), so no wing imports the one above it, and the
 * shared files under them (keys/, migrations/, the files beside the wings) import none: only the
 * composition (service.ts, config.ts, main.ts, index.ts, admin.ts) reaches every wing.
 */
const AUTH = '^services/auth/src/';
const AUTH_WINGS = {
  'account-api': [],
  'nats-users': [],
  billing: ['account-api'],
  webhooks: ['account-api'],
  push: ['account-api'],
  pusher: ['account-api'],
  admin: ['billing', 'nats-users', 'webhooks', 'push', 'pusher'],
};
const authWing = `${AUTH}(${Object.keys(AUTH_WINGS).join('|')})/`;
const authWings = [
  ...Object.entries(AUTH_WINGS).map(([wing, below]) => ({
    name: `auth's ${wing}/ imports ${below.length ? `no wing but ${below.map((w) => `${w}/`).join(', ')}` : 'no other wing'}`,
    severity: 'error',
    from: { path: `${AUTH}${wing}/` },
    to: { path: authWing, pathNot: `${AUTH}(${[wing, ...below].join('|')})/` },
  })),
  {
    name: "auth's shared files import no wing",
    severity: 'error',
    from: {
      path: AUTH,
      pathNot: `${authWing}|${AUTH}(service|config|main|index|admin)\\.ts$`,
    },
    to: { path: authWing },
  },
];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Files that import each other (even for types) are one concept in two files.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...onlyBelow,
    ...edgeWings,
    {
      name: 'services import only proto and the libraries',
      comment: 'Services meet on NATS subjects, never through each other.',
      severity: 'error',
      from: { path: '^services/([^/]+)/' },
      to: { path: HERALD, pathNot: `^(services/$1|${SERVICES_MAY.join('|')})/` },
    },
    ...authWings,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(\\.test\\.tsx?$|/test/|/dist/|/node_modules/)' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      // Workspace packages resolve to their sources, as in the tests.
      conditionNames: ['herald-source', 'import', 'types', 'default'],
      extensions: ['.ts', '.tsx', '.js'],
    },
  },
};
