import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebPushSubscription } from '@herald/proto';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@herald/testkit/browser';
import { type BrowserContext, chromium } from 'playwright-core';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');

async function listen(server: http.Server): Promise<{ port: number; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const PAGE = `<!doctype html><meta charset="utf-8"><title>push test</title>
<script type="module">
  // The built entry, exactly as shipped (dist/push.js).
  import { HeraldPush, HeraldError } from '/push.js';
  window.HeraldPush = HeraldPush;
  window.HeraldError = HeraldError;
  window.pushReady = true;
</script>`;

/**
 * The app's origin, http://localhost (a secure context): a page that loads `@herald/sdk/push`, the
 * service worker file `@herald/sdk/sw` as an app serves it, and any other path a page titled with
 * its path (where a notification click lands).
 */
export async function serveApp() {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (type: string, body: string | Buffer) =>
      void res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    if (path === '/') return send('text/html', PAGE);
    if (path === '/push.js') return send('text/javascript', readFileSync(join(DIST, 'push.js')));
    if (path === '/herald-sw.js')
      return send('text/javascript', readFileSync(join(DIST, 'herald-sw.js')));
    send('text/html', `<!doctype html><title>landing ${path}</title>`);
  });
  const { port, close } = await listen(server);
  return { origin: `http://localhost:${port}`, port, close };
}

/** A request the stand-in for ingress's push routes received. */
export type Recorded = {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
};

/**
 * A stand-in for ingress-api's push routes (proto/push.ts), which other branches are building:
 * the VAPID key route answers a real P-256 public key, POST checks the body against proto's
 * WebPushSubscription and answers 201 (200 and the same id for a known endpoint), DELETE 204; a
 * request without a token while `requireToken` is set gets ingress's refusal. Records everything.
 */
export async function servePushRoutes() {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const jwk = publicKey.export({ format: 'jwk' });
  const raw = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x as string, 'base64url'),
    Buffer.from(jwk.y as string, 'base64url'),
  ]);
  const state = {
    publicKey: raw.toString('base64url'),
    requireToken: false,
    requests: [] as Recorded[],
    ids: new Map<string, string>(),
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const cors = {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, POST, DELETE',
      'access-control-allow-headers': 'content-type',
    };
    const json = (status: number, body?: object) =>
      void res
        .writeHead(status, body ? { ...cors, 'content-type': 'application/json' } : cors)
        .end(body ? JSON.stringify(body) : undefined);
    if (req.method === 'OPTIONS') return json(204);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const body = text ? JSON.parse(text) : undefined;
      const query = Object.fromEntries(url.searchParams);
      state.requests.push({ method: req.method ?? '', path: url.pathname, query, body });
      const token = body?.token ?? query.token;
      if (state.requireToken && url.pathname !== '/push/vapid-public-key' && !token)
        return json(401, {
          error: {
            code: 'token_required',
            message: 'this key requires a recipient token',
            field: 'token',
          },
        });
      if (req.method === 'GET' && url.pathname === '/push/vapid-public-key')
        return json(200, { public_key: state.publicKey });
      if (req.method === 'POST' && url.pathname === '/push/subscriptions') {
        const sub = WebPushSubscription.safeParse(body?.subscription);
        if (!sub.success)
          return json(400, { error: { code: 'invalid_body', message: sub.error.message } });
        const known = state.ids.get(sub.data.endpoint);
        const id = known ?? randomUUID();
        state.ids.set(sub.data.endpoint, id);
        return json(known ? 200 : 201, { id });
      }
      if (req.method === 'DELETE' && url.pathname.startsWith('/push/subscriptions/'))
        return json(204);
      json(404, { error: { code: 'not_found', message: 'no such route' } });
    });
  });
  const { port, close } = await listen(server);
  return { state, baseUrl: `http://localhost:${port}`, close };
}

/**
 * A stand-in for Google's GCM registration service, which Chromium's push service client asks
 * (`--gcm-checkin-url`, `--gcm-registration-url`): a checkin answers a device id and security
 * token (an AndroidCheckinResponse protobuf, encoded by hand), a registration a token, from which
 * Chromium makes the subscription's endpoint; its own keys (p256dh, auth) are Chromium's. Records
 * each registration's form (`sender` is the application server key). `hang` leaves them unanswered.
 */
export async function serveGcm() {
  const state = { registrations: [] as Array<Record<string, string>>, hang: false };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.hang) return;
      if (req.url === '/checkin') {
        // stats_ok (1) = true, android_id (7) and security_token (8) as fixed64, settings_diff (9).
        const b = Buffer.alloc(22);
        b.set([0x08, 0x01, 0x39], 0);
        b.writeBigUInt64LE(0x1234567890n, 3);
        b[11] = 0x41;
        b.writeBigUInt64LE(0x9876543210n, 12);
        b.set([0x48, 0x00], 20);
        return void res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(b);
      }
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
      state.registrations.push(form);
      // An unregistration (the browser's unsubscribe) asks with delete=true.
      const answer = form.delete
        ? `deleted=${form.app}`
        : `token=t${state.registrations.length}-${randomUUID()}`;
      res.writeHead(200, { 'content-type': 'text/plain' }).end(answer);
    });
  });
  const { port, close } = await listen(server);
  return { state, url: `http://127.0.0.1:${port}`, close };
}

/**
 * Debian's chromium with a profile on disk: Chromium refuses push subscriptions in an incognito
 * profile, which `browser.newContext()` is ("Registration failed - permission denied").
 */
export async function launchChromium(
  profile: string,
  gcmUrl: string,
  extraArgs: string[] = [],
  env?: Record<string, string>,
): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    ...(env ? { env: { ...process.env, ...env } as Record<string, string> } : {}),
    args: [
      ...CHROMIUM_ARGS,
      `--gcm-checkin-url=${gcmUrl}/checkin`,
      `--gcm-registration-url=${gcmUrl}/register3`,
      // Nothing listens there: receiving pushes is not what these tests ask of GCM.
      '--gcm-mcs-endpoint=https://127.0.0.1:9',
      ...extraArgs,
    ],
  });
}
