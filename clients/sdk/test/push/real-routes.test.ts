import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PushSubscriptionView } from '@herald/proto';
import { eventually, type KeyObject, type Stack, startStack } from '@herald/testkit';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, serveApp, serveGcm } from './servers.js';

/**
 * `push.subscribe` of dist/push.js in Chromium against the real push routes: auth, ingress-api and
 * the status service on a real nats-server and Postgres (lib/testkit's stack), an account with a
 * VAPID key made by the admin CLI, and a web Test key bound to the page's origin. Chromium's own
 * `pushManager.subscribe` (against the GCM stand-in, as subscribe.test.ts does) makes the
 * subscription; ingress authorises it as `/ws/connect` would (Origin, recipient, CORS) and the
 * status service keeps it, which the admin CLI's `push subscriptions` then lists.
 */
describe('push.subscribe in Chromium against the real routes', () => {
  let stack: Stack;
  let app: Awaited<ReturnType<typeof serveApp>>;
  let gcm: Awaited<ReturnType<typeof serveGcm>>;
  let context: BrowserContext;
  let page: Page;
  let account: string;
  let key: KeyObject;
  let vapid: string;
  const profile = mkdtempSync(join(tmpdir(), 'herald-push-real-'));
  const recipient = randomUUID();
  /** Generous: a stack, an admin process or Chromium's worker may be slow on a loaded box. */
  const WAIT_MS = 60_000;

  beforeAll(async () => {
    [app, gcm] = await Promise.all([serveApp(), serveGcm()]);
    stack = await startStack({
      services: ['auth', 'ingress-api', 'status'],
      env: { status: { WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64') } },
    });
    ({ id: account } = await stack.createAccount());
    const configured = (await stack.admin([
      'push',
      'configure',
      '--account',
      account,
      '--vapid',
      'generate',
      '--vapid-subject',
      'mailto:ops@example.com',
      '--json',
    ])) as { public_key: string };
    vapid = configured.public_key;
    // A browser key as an app registers it: its domain is the page's origin.
    key = await stack.createKey({
      account,
      kind: 'test',
      client: 'web',
      domain: app.origin,
      push: { afterMs: 1000 },
    });
    context = await launchChromium(profile, gcm.url);
    await context.grantPermissions(['notifications'], { origin: app.origin });
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${app.origin}/`);
    await page.waitForFunction(() => (window as never as { pushReady?: boolean }).pushReady);
  }, 240_000);

  afterAll(async () => {
    await context?.close();
    await Promise.all([app?.close(), gcm?.close(), stack?.stop()]);
    rmSync(profile, { recursive: true, force: true });
  }, 60_000);

  /** Runs `op` of a HeraldPush made in the page on the stack, for the test's recipient. */
  const run = (op: 'subscribe' | 'unsubscribe', apiKey = key.key) =>
    page.evaluate(
      async ({ op, baseUrl, apiKey, recipient }) => {
        const w = window as never as {
          HeraldPush: new (o: object) => Record<string, (o: object) => Promise<unknown>>;
        };
        try {
          const push = new w.HeraldPush({ apiKey, client: 'web', baseUrl, device: 'laptop-1' });
          const fn = push[op] as (o: object) => Promise<unknown>;
          return {
            ok: await fn.call(push, {
              recipient,
              serviceWorker: '/herald-sw.js',
              timeoutMs: 60_000,
            }),
          };
        } catch (e) {
          const err = e as { name: string; code?: string; message: string; field?: string };
          return {
            error: { name: err.name, code: err.code, message: err.message, field: err.field },
          };
        }
      },
      { op, baseUrl: stack.baseUrl, apiKey, recipient },
    );

  const listed = async () => {
    const out = (await stack.admin([
      'push',
      'subscriptions',
      '--account',
      account,
      '--recipient',
      recipient,
      '--json',
    ])) as { subscriptions: unknown[] };
    return out.subscriptions.map((s) => PushSubscriptionView.parse(s));
  };

  it(
    'posts the browser’s subscription, made with the account’s VAPID key, which the status service then lists',
    async () => {
      const first = await run('subscribe');
      expect(first).toEqual({ ok: { id: expect.any(String) } });
      const id = (first as { ok: { id: string } }).ok.id;
      // Chromium subscribed with the key ingress served from the status service.
      expect(gcm.state.registrations.at(-1)?.sender).toBe(vapid);
      const endpoint = await page.evaluate(async () => {
        const reg = await navigator.serviceWorker.getRegistration();
        return (await reg?.pushManager.getSubscription())?.endpoint ?? null;
      });
      expect(endpoint).toMatch(/^https:\/\//);
      let views: Awaited<ReturnType<typeof listed>> = [];
      await eventually(
        async () => {
          views = await listed();
          return views.length > 0;
        },
        'the subscription listed',
        WAIT_MS,
      );
      expect(views).toEqual([
        expect.objectContaining({
          id,
          account_id: account,
          key_id: key.id,
          recipient,
          kind: 'webpush',
          device: 'laptop-1',
          endpoint_origin: new URL(endpoint as string).origin,
        }),
      ]);

      // Again: the same browser subscription, the same id, still one subscription.
      expect(await run('subscribe')).toEqual({ ok: { id } });
      expect(await listed()).toHaveLength(1);
    },
    WAIT_MS * 3,
  );

  it(
    'refuses a key whose account has no VAPID key, naming api_key; unsubscribe deletes the subscription at Herald',
    async () => {
      const { id: other } = await stack.createAccount();
      const otherKey = await stack.createKey({
        account: other,
        kind: 'test',
        client: 'web',
        domain: app.origin,
      });
      // The other account has no VAPID key: ingress refuses before Chromium is asked.
      expect(await run('subscribe', otherKey.key)).toMatchObject({
        error: { name: 'HeraldError', code: 'not_found', field: 'api_key' },
      });
      expect(await run('subscribe')).toEqual({ ok: { id: expect.any(String) } });
      expect(await run('unsubscribe')).toEqual({ ok: true });
      expect(await listed()).toEqual([]);
    },
    WAIT_MS * 3,
  );
});
