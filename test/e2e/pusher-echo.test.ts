import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { eventually, makeCerts, type PusherAppObject, REPO_ROOT } from '@herald/testkit';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@herald/testkit/browser';
import { type Browser, chromium, type Page } from 'playwright-core';
import Pusher from 'pusher';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useStack } from './fixtures.js';
import { pusherBackend } from './pusher-fixtures.js';

/**
 * Laravel's notifications through the Pusher door (issue 41), with nothing of Herald's in the
 * browser: the stock pusher-js web build and Laravel Echo's browser build in Chromium, an app
 * server whose `/broadcasting/auth` signs with the stock `pusher` library, and the backend's
 * `pusher.trigger` on Laravel's user channel, sent while the user is offline. The app maps any
 * user id (`--user-ids any`) and `private-App.Models.User.{id}` is its user channel, so the
 * notification is a Herald event for user 7, stored until Echo's private channel is back.
 */

const NOTIFICATION = 'Illuminate\\Notifications\\Events\\BroadcastNotificationCreated';
const USER_CHANNEL = 'private-App.Models.User.{id}';
const node = (...p: string[]) => readFileSync(join(REPO_ROOT, 'node_modules', ...p));

const stack = useStack();
let browser: Browser;
let page: Page | undefined;
let appServer: { origin: string; setApp(app: PusherAppObject): void; close(): Promise<void> };

/** The app's origin: its page (pusher-js and Echo as shipped) and Laravel's channel auth. */
async function serveApp(): Promise<typeof appServer> {
  const certs = await makeCerts();
  let signer: Pusher | undefined;
  const server = https.createServer(
    { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) },
    (req, res) => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      const send = (type: string, body: string | Buffer, status = 200) =>
        void res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
      if (path === '/pusher.js')
        return send('text/javascript', node('pusher-js/dist/web/pusher.js'));
      if (path === '/echo.js')
        return send('text/javascript', node('laravel-echo/dist/echo.iife.js'));
      if (path === '/broadcasting/auth' && req.method === 'POST') {
        let body = '';
        req.on('data', (c: Buffer) => {
          body += c.toString('utf8');
        });
        req.on('end', () => {
          const form = new URLSearchParams(body);
          const channel = form.get('channel_name') ?? '';
          // Laravel's routes/channels.php: only user 7 may listen on user 7's channel.
          if (!signer || channel !== 'private-App.Models.User.7')
            return send('text/plain', '', 403);
          const auth = signer.authorizeChannel(form.get('socket_id') ?? '', channel);
          send('application/json', JSON.stringify(auth));
        });
        return;
      }
      send('text/html', '<!doctype html><meta charset="utf-8"><title>app</title>');
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://localhost:${port}`,
    setApp: (app) => {
      signer = new Pusher({ appId: app.app_id, key: app.key, secret: app.secret, cluster: 'mt1' });
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

beforeAll(async () => {
  appServer = await serveApp();
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] });
});
afterAll(async () => {
  await browser?.close();
  await appServer?.close();
});

/** The backend: the stock `pusher` library pointed at the stack's ingress, trusting its CA. */
const backend = (app: PusherAppObject): Pusher => pusherBackend(stack(), app);

/** Opens the app's page and listens as Laravel's docs say, with Echo over pusher-js. */
async function openEcho(app: PusherAppObject): Promise<Page> {
  const p = await browser.newPage();
  await p.goto(`${appServer.origin}/`);
  await p.addScriptTag({ url: '/pusher.js' });
  await p.addScriptTag({ url: '/echo.js' });
  const wssPort = Number(new URL(stack().wsUrl).port);
  await p.evaluate(
    ({ key, wssPort }) => {
      type EchoChannel = { notification(cb: (n: unknown) => void): void };
      type EchoClass = new (o: object) => { private(name: string): EchoChannel };
      const w = window as unknown as {
        got: unknown[];
        echo: unknown;
        Pusher: unknown;
        Echo: { default: EchoClass };
      };
      w.got = [];
      const echo = new w.Echo.default({
        broadcaster: 'pusher',
        Pusher: w.Pusher,
        key,
        cluster: 'mt1',
        wsHost: '127.0.0.1',
        wssPort,
        forceTLS: true,
        enabledTransports: ['ws'],
        disableStats: true,
        authEndpoint: '/broadcasting/auth',
      });
      echo.private('App.Models.User.7').notification((n: unknown) => w.got.push(n));
      w.echo = echo;
    },
    { key: app.key, wssPort },
  );
  return p;
}

const received = (p: Page) => p.evaluate(() => (window as unknown as { got: unknown[] }).got);

describe("Laravel Echo's notifications through the Pusher door", () => {
  it('gets a notification sent while the user was offline, then one sent live', async () => {
    const s = stack();
    const { id: account } = await s.createAccount();
    // A web key bound to the app's origin: the socket's Origin is checked, and web keys want
    // recipient tokens, which subscribing to the user channel (signed by the app) stands in for.
    const key = await s.createKey({
      account,
      kind: 'test',
      client: 'web',
      domain: appServer.origin,
    });
    const app = await s.createPusherApp({
      account,
      keyId: key.id,
      userIds: 'any',
      userChannel: USER_CHANNEL,
    });
    appServer.setApp(app);
    const laravel = backend(app);

    const offline = await laravel.trigger('private-App.Models.User.7', NOTIFICATION, {
      id: 'n-1',
      type: 'App\\Notifications\\OrderShipped',
      order: 42,
    });
    expect(offline.status).toBe(200);
    expect(offline.headers.get('x-herald-status')).toBe('queued');
    const storedId = offline.headers.get('x-herald-id');
    expect(storedId).toMatch(/^[0-9a-f-]{36}$/);

    page = await openEcho(app);
    await eventually(
      async () => (await received(page as Page)).length > 0,
      'the stored notification at Echo',
      30_000,
    );
    expect(await received(page)).toEqual([
      { herald_id: storedId, id: 'n-1', type: 'App\\Notifications\\OrderShipped', order: 42 },
    ]);

    // Now online: answered sent only once the browser's pusher-js answered the edge's ping.
    const live = await laravel.trigger('private-App.Models.User.7', NOTIFICATION, {
      id: 'n-2',
      order: 43,
    });
    expect(live.headers.get('x-herald-status')).toBe('sent');
    const liveId = live.headers.get('x-herald-id');
    await eventually(
      async () => (await received(page as Page)).length === 2,
      'the live notification at Echo',
      20_000,
    );
    expect((await received(page))[1]).toEqual({ herald_id: liveId, id: 'n-2', order: 43 });
    await page.close();
    page = undefined;
  });

  it("refuses a page of another origin with the web key's domain check", async () => {
    const s = stack();
    const { id: account } = await s.createAccount();
    const key = await s.createKey({
      account,
      kind: 'test',
      client: 'web',
      domain: 'https://elsewhere.example',
    });
    const app = await s.createPusherApp({ account, keyId: key.id, userIds: 'any' });
    appServer.setApp(app);
    const p = await openEcho(app);
    const state = () =>
      p.evaluate(
        () =>
          (
            window as unknown as {
              echo: { connector: { pusher: { connection: { state: string } } } };
            }
          ).echo.connector.pusher.connection.state,
      );
    await eventually(
      async () => ['failed', 'unavailable', 'disconnected'].includes(await state()),
      'the connection refused',
      20_000,
    );
    expect(await state()).not.toBe('connected');
    await p.close();
  });
});
