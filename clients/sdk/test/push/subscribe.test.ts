import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebPushSubscription } from '@herald/proto';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium, serveApp, serveGcm, servePushRoutes } from './servers.js';

/**
 * `@herald/sdk/push` as shipped (dist/push.js) in real Chromium: the service worker registered,
 * Chromium's own `pushManager.subscribe` (its keys, its endpoint) made against a stand-in for
 * Google's GCM registration service, and the subscription posted to a stand-in for ingress's push
 * routes (the real ones are built on another branch), which records what it got.
 */
describe('push.subscribe in Chromium', () => {
  let app: Awaited<ReturnType<typeof serveApp>>;
  let routes: Awaited<ReturnType<typeof servePushRoutes>>;
  let gcm: Awaited<ReturnType<typeof serveGcm>>;
  let context: BrowserContext;
  let page: Page;
  const profile = mkdtempSync(join(tmpdir(), 'herald-push-'));
  const recipient = randomUUID();

  beforeAll(async () => {
    [app, routes, gcm] = await Promise.all([serveApp(), servePushRoutes(), serveGcm()]);
    // A host that is not localhost, for a page that is not a secure context.
    context = await launchChromium(profile, gcm.url, [
      '--host-resolver-rules=MAP insecure.test 127.0.0.1',
    ]);
    page = context.pages()[0] ?? (await context.newPage());
  });

  afterAll(async () => {
    await context?.close();
    await Promise.all([app?.close(), routes?.close(), gcm?.close()]);
    rmSync(profile, { recursive: true, force: true });
  });

  beforeEach(async () => {
    routes.state.requests.length = 0;
    routes.state.requireToken = false;
    gcm.state.hang = false;
    await context.clearPermissions();
    await context.grantPermissions(['notifications'], { origin: app.origin });
    await page.goto(`${app.origin}/`);
    await page.waitForFunction(() => (window as never as { pushReady?: boolean }).pushReady);
  });

  type Outcome =
    | { ok: unknown }
    | { error: { name: string; code?: string; kind?: string; message: string; field?: string } };

  /**
   * Runs `op` of a HeraldPush made in the page with the route server's base URL, the test's
   * recipient and a getToken that numbers its tokens (tok-1, tok-2, ...) unless `token` is false.
   */
  const run = (
    op: 'subscribe' | 'unsubscribe',
    extra: Record<string, unknown> = {},
    token = true,
  ) =>
    page.evaluate(
      async ({ op, baseUrl, recipient, extra, token }) => {
        const w = window as never as {
          HeraldPush: new (o: object) => Record<string, (o: object) => Promise<unknown>>;
          tokens?: number;
        };
        try {
          const push = new w.HeraldPush({
            apiKey: 'hk_test_push',
            client: 'web',
            baseUrl,
            device: 'laptop-1',
            ...(token
              ? {
                  getToken: async () => {
                    w.tokens = (w.tokens ?? 0) + 1;
                    return `tok-${w.tokens}`;
                  },
                }
              : {}),
          });
          const fn = push[op] as (o: object) => Promise<unknown>;
          return {
            ok: await fn.call(push, { recipient, serviceWorker: '/herald-sw.js', ...extra }),
          };
        } catch (e) {
          const err = e as {
            name: string;
            code?: string;
            kind?: string;
            message: string;
            field?: string;
          };
          return {
            error: {
              name: err.name,
              code: err.code,
              kind: err.kind,
              message: err.message,
              field: err.field,
            },
          };
        }
      },
      { op, baseUrl: routes.baseUrl, recipient, extra, token },
    ) as Promise<Outcome>;

  const browserSubscription = () =>
    page.evaluate(async () => {
      const reg = await navigator.serviceWorker.getRegistration();
      return (await reg?.pushManager.getSubscription())?.toJSON() ?? null;
    });

  it('registers the worker, subscribes with the VAPID key and posts the subscription with key, recipient, token and device', async () => {
    const first = await run('subscribe');
    expect(first).toEqual({ ok: { id: expect.any(String) } });
    const id = (first as { ok: { id: string } }).ok.id;
    // Chromium's push service client was asked with the key Herald served.
    expect(gcm.state.registrations.at(-1)?.sender).toBe(routes.state.publicKey);
    const sub = await browserSubscription();
    expect(WebPushSubscription.safeParse(sub).success).toBe(true);
    const [vapid, post] = routes.state.requests;
    expect(vapid).toMatchObject({
      method: 'GET',
      path: '/push/vapid-public-key',
      query: { api_key: 'hk_test_push' },
    });
    expect(post).toEqual({
      method: 'POST',
      path: '/push/subscriptions',
      query: {},
      body: {
        api_key: 'hk_test_push',
        recipient,
        client: 'web',
        token: 'tok-1',
        device: 'laptop-1',
        kind: 'webpush',
        subscription: sub,
      },
    });
    expect(routes.state.requests).toHaveLength(2);

    // Again, in the same page: the same browser subscription, a fresh token, the same id.
    expect(await run('subscribe')).toEqual({ ok: { id } });
    expect(routes.state.requests.at(-1)?.body).toMatchObject({ token: 'tok-2', subscription: sub });
    expect(await browserSubscription()).toEqual(sub);
  });

  it('unsubscribe ends the browser subscription and deletes it at Herald, with a fresh token', async () => {
    const sub = await run('subscribe');
    const id = (sub as { ok: { id: string } }).ok.id;
    await page.reload(); // the id is no longer in memory: unsubscribe learns it again
    await page.waitForFunction(() => (window as never as { pushReady?: boolean }).pushReady);
    routes.state.requests.length = 0;
    expect(await run('unsubscribe')).toEqual({ ok: true });
    expect(await browserSubscription()).toBeNull();
    const del = routes.state.requests.at(-1);
    expect(del).toEqual({
      method: 'DELETE',
      path: `/push/subscriptions/${id}`,
      query: { api_key: 'hk_test_push', recipient, token: expect.stringMatching(/^tok-/) },
      body: undefined,
    });
    // Nothing left to end.
    routes.state.requests.length = 0;
    expect(await run('unsubscribe')).toEqual({ ok: false });
    expect(routes.state.requests).toEqual([]);
  });

  it("passes Herald's refusal on: a key that requires tokens, called without one", async () => {
    routes.state.requireToken = true;
    expect(await run('subscribe', {}, false)).toEqual({
      error: {
        name: 'HeraldError',
        code: 'token_required',
        kind: 'refused',
        message: 'this key requires a recipient token',
        field: 'token',
      },
    });
  });

  it('rejects with permission_denied when the user blocked notifications, before asking anyone', async () => {
    const cdp = await context.newCDPSession(page);
    await cdp.send('Browser.setPermission', {
      permission: { name: 'notifications' },
      setting: 'denied',
      origin: app.origin,
    });
    await page.reload();
    await page.waitForFunction(() => (window as never as { pushReady?: boolean }).pushReady);
    expect(await page.evaluate(() => Notification.permission)).toBe('denied');
    expect(await run('subscribe')).toMatchObject({
      error: { name: 'HeraldError', code: 'permission_denied', kind: 'refused' },
    });
    expect(routes.state.requests).toEqual([]);
  });

  it('rejects with push_unsupported on a page that is not a secure context', async () => {
    await page.goto(`http://insecure.test:${app.port}/`);
    await page.waitForFunction(() => (window as never as { pushReady?: boolean }).pushReady);
    expect(await page.evaluate(() => window.isSecureContext)).toBe(false);
    expect(await run('subscribe')).toMatchObject({
      error: { name: 'HeraldError', code: 'push_unsupported', kind: 'runtime' },
    });
    expect(routes.state.requests).toEqual([]);
  });

  it('gives up with timeout after timeoutMs when the push service never answers', async () => {
    await run('unsubscribe');
    gcm.state.hang = true;
    const started = Date.now();
    expect(await run('subscribe', { timeoutMs: 1500 })).toMatchObject({
      error: { name: 'HeraldError', code: 'timeout', kind: 'network' },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('checks its options: recipient, serviceWorker, and timeoutMs from 1 to 300000', async () => {
    const bad = (extra: Record<string, unknown>) => run('subscribe', extra);
    expect(await bad({ recipient: 'not-a-uuid' })).toMatchObject({
      error: { name: 'TypeError', message: expect.stringContaining('recipient: a UUID v4') },
    });
    expect(await bad({ serviceWorker: '' })).toMatchObject({
      error: { name: 'TypeError', message: expect.stringContaining('serviceWorker') },
    });
    for (const timeoutMs of [0, 300_001, 1.5])
      expect(await bad({ timeoutMs })).toMatchObject({
        error: {
          name: 'TypeError',
          message: expect.stringContaining('timeoutMs must be an integer from 1 to 300000'),
        },
      });
    // The bounds themselves are accepted (and then subscribe, quickly).
    expect(await bad({ timeoutMs: 300_000 })).toEqual({ ok: { id: expect.any(String) } });
    expect(routes.state.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });
});
