import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type { PusherApp } from '../src/api.js';
import {
  endpointOf,
  endpoints,
  SECRET_PLACEHOLDER,
  type Snippet,
  snippets,
  USER_CHANNEL_EXAMPLE,
} from '../src/pusher.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

const APP: PusherApp = {
  app_id: '4821937465',
  key: '0a1b2c3d4e5f60718293',
  key_id: 'key-1',
  user_ids: 'any',
  user_channel: null,
  created_at: '2026-11-29T12:00:00.000Z',
};
const CONFIG = { ingress_url: 'https://api.herald.test:8443', ws_url: 'wss://ws.herald.test:8444' };
const SECRET = 'f'.repeat(40);

const byId = (list: Snippet[], id: Snippet['id']) => list.find((s) => s.id === id)?.code ?? '';

/**
 * Type-checks snippets against the installed packages' own type definitions (pusher-js, pusher,
 * laravel-echo), as a TypeScript user pasting them would: a misspelt or mistyped option fails.
 * The files are virtual, beside this one, so the packages resolve from the repository.
 */
function typeErrors(codes: string[]): string[] {
  const preamble = [
    'declare global {',
    "  interface Window { Pusher: unknown; Echo: import('laravel-echo').default<'pusher'> }",
    '}',
    'declare const userId: string;',
    'declare const socketId: string;',
    'declare const channelName: string;',
  ].join('\n');
  const files = new Map(
    codes.map((code, i) => [join(HERE, `__snippet_${i}.ts`), `${preamble}\n${code}\nexport {};\n`]),
  );
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    strict: true,
    // Snippets are JavaScript: an untyped callback parameter is theirs to type.
    noImplicitAny: false,
    noEmit: true,
    skipLibCheck: true,
    esModuleInterop: true,
    allowSyntheticDefaultImports: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) => {
    const text = files.get(name);
    return text === undefined
      ? getSourceFile(name, lang, ...rest)
      : ts.createSourceFile(name, text, lang);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => files.has(name) || fileExists(name);
  const program = ts.createProgram([...files.keys()], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

describe('endpointOf', () => {
  it('takes host and port from a URL, 443 when it names none, and a path prefix', () => {
    expect(endpointOf('wss://ws.herald.test:8444', 'x')).toEqual({
      host: 'ws.herald.test',
      port: 8444,
      path: '',
      known: true,
    });
    expect(endpointOf('https://api.herald.test/', 'x')).toMatchObject({ port: 443, path: '' });
    expect(endpointOf('wss://edge.test/realtime/', 'x')).toMatchObject({ path: '/realtime' });
  });

  it('gives the placeholder, flagged unknown, when the server names no URL or a broken one', () => {
    expect(endpointOf(null, 'ws.example.com')).toEqual({
      host: 'ws.example.com',
      port: 443,
      path: '',
      known: false,
    });
    expect(endpointOf('not a url', 'api.example.com').known).toBe(false);
  });
});

describe('snippets', () => {
  it("carry the app's key and id, the socket edge's and ingress's host and port", () => {
    const list = snippets({ app: APP, config: CONFIG });
    expect(list.map((s) => s.id)).toEqual(['pusher-js', 'pusher-node', 'laravel', 'echo']);
    const js = byId(list, 'pusher-js');
    expect(js).toContain(`new Pusher('${APP.key}', {`);
    expect(js).toContain("wsHost: 'ws.herald.test',");
    expect(js).toContain('wssPort: 8444,');
    expect(js).toContain("enabledTransports: ['ws'],");
    expect(js).toContain("cluster: 'mt1',");
    expect(js).toContain(
      "userAuthentication: { endpoint: '/pusher/user-auth', transport: 'ajax' }",
    );
    expect(js).toContain("channelAuthorization: { endpoint: '/pusher/auth', transport: 'ajax' }");
    const node = byId(list, 'pusher-node');
    expect(node).toContain(`appId: '${APP.app_id}',`);
    expect(node).toContain("host: 'api.herald.test',");
    expect(node).toContain("port: '8443',");
    const laravel = byId(list, 'laravel');
    expect(laravel).toContain(`PUSHER_APP_ID=${APP.app_id}\nPUSHER_APP_KEY=${APP.key}`);
    expect(laravel).toContain('PUSHER_HOST=api.herald.test\nPUSHER_PORT=8443\nPUSHER_SCHEME=https');
    expect(laravel).toContain('VITE_PUSHER_HOST=ws.herald.test\nVITE_PUSHER_PORT=8444');
    expect(laravel).toContain("'useTLS' => true,");
    expect(byId(list, 'echo')).toContain(`key: '${APP.key}',`);
    // No path prefix: pusher-js's default.
    expect(js).not.toContain('wsPath');
  });

  it('carry the secret only when it was just shown; the browser ones never do', () => {
    const placeholder = snippets({ app: APP, config: CONFIG });
    const shown = snippets({ app: APP, secret: SECRET, config: CONFIG });
    expect(byId(placeholder, 'pusher-node')).toContain(`secret: '${SECRET_PLACEHOLDER}',`);
    expect(byId(placeholder, 'laravel')).toContain(`PUSHER_APP_SECRET=${SECRET_PLACEHOLDER}`);
    expect(byId(shown, 'pusher-node')).toContain(`secret: '${SECRET}',`);
    expect(byId(shown, 'laravel')).toContain(`PUSHER_APP_SECRET=${SECRET}`);
    for (const id of ['pusher-js', 'echo'] as const) {
      expect(byId(shown, id)).not.toContain(SECRET);
      expect(byId(shown, id)).not.toContain(SECRET_PLACEHOLDER);
    }
  });

  it("use the app's user channel when it has one, Echo without its private- prefix", () => {
    const list = snippets({ app: { ...APP, user_channel: USER_CHANNEL_EXAMPLE }, config: CONFIG });
    // The snippets' own template literals, `${userId}` inside them.
    const id = ['$', '{userId}'].join('');
    expect(byId(list, 'pusher-js')).toContain(
      `pusher.subscribe(\`private-App.Models.User.${id}\`)`,
    );
    expect(byId(list, 'echo')).toContain(
      `window.Echo.private(\`App.Models.User.${id}\`).notification(`,
    );
  });

  it("put a proxy's path prefix in wsPath, and placeholders where the server names no URL", () => {
    const prefixed = snippets({ app: APP, config: { ...CONFIG, ws_url: 'wss://edge.test/rt' } });
    expect(byId(prefixed, 'pusher-js')).toContain("wssPort: 443,\n  wsPath: '/rt',");
    const none = snippets({ app: APP, config: undefined });
    expect(byId(none, 'pusher-js')).toContain("wsHost: 'ws.example.com',");
    expect(byId(none, 'pusher-node')).toContain("host: 'api.example.com',");
    expect(endpoints(undefined).ws.known).toBe(false);
  });

  it('type-check against pusher-js, pusher and laravel-echo as installed', () => {
    const ts = (list: Snippet[]) => list.filter((s) => s.id !== 'laravel').map((s) => s.code);
    const all = [
      ...ts(snippets({ app: APP, config: CONFIG })),
      ...ts(snippets({ app: { ...APP, user_channel: USER_CHANNEL_EXAMPLE }, config: CONFIG })),
      ...ts(snippets({ app: APP, config: { ...CONFIG, ws_url: 'wss://edge.test/rt' } })),
    ];
    expect(typeErrors(all)).toEqual([]);
    // The check can fail: a port as pusher-js would refuse it, an option it does not have.
    const js = byId(snippets({ app: APP, config: CONFIG }), 'pusher-js');
    expect(typeErrors([js.replace('wssPort: 8444', "wssPort: '8444'")]).join('\n')).toContain(
      "Type 'string' is not assignable to type 'number'",
    );
    expect(typeErrors([js.replace('forceTLS', 'forceTls')]).join('\n')).toContain(
      "'forceTls' does not exist",
    );
  }, 60_000);

  it('configure the pusher Node library to call the HTTP API at the configured host and port', () => {
    const Pusher = require('pusher') as new (o: unknown) => unknown;
    const code = byId(snippets({ app: APP, secret: SECRET, config: CONFIG }), 'pusher-node');
    // The constructor call as written, run against the library itself.
    const ctor = code.slice(code.indexOf('const pusher'), code.indexOf('});') + 3);
    const pusher = new Function('Pusher', `${ctor}\nreturn pusher;`)(Pusher) as {
      config: { appId: string; getBaseURL(): string; token: { key: string } };
    };
    expect(pusher.config.getBaseURL()).toBe('https://api.herald.test:8443');
    expect(pusher.config.appId).toBe(APP.app_id);
    expect(pusher.config.token.key).toBe(APP.key);
  });
});
