import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, serveApp, serveGcm } from './servers.js';

/** How long a push message may take to show before it is sent again, ms. */
const RESEND_MS = 2500;

/**
 * `@herald/sdk/sw` (dist/herald-sw.js) in real Chromium: registered by a page, sent push messages
 * through the DevTools protocol (`ServiceWorker.deliverPushMessage`, the path a push service's
 * message takes inside the browser), its notifications read back with `getNotifications()`.
 */
describe('the service worker file in Chromium', () => {
  let app: Awaited<ReturnType<typeof serveApp>>;
  let gcm: Awaited<ReturnType<typeof serveGcm>>;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let registrationId: string;
  const profile = mkdtempSync(join(tmpdir(), 'herald-sw-'));

  beforeAll(async () => {
    app = await serveApp();
    gcm = await serveGcm();
    context = await launchChromium(profile, gcm.url);
    await context.grantPermissions(['notifications'], { origin: app.origin });
    page = context.pages()[0] ?? (await context.newPage());
    cdp = await context.newCDPSession(page);
    const registrations: Array<{ registrationId: string; scopeURL: string; isDeleted: boolean }> =
      [];
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) =>
      registrations.push(...e.registrations),
    );
    await cdp.send('ServiceWorker.enable');
    await page.goto(`${app.origin}/`);
    await page.evaluate(async () => {
      await navigator.serviceWorker.register('/herald-sw.js');
      await navigator.serviceWorker.ready;
    });
    const found = registrations.find((r) => r.scopeURL === `${app.origin}/` && !r.isDeleted);
    if (!found) throw new Error('Chromium reported no registration for the worker');
    registrationId = found.registrationId;
    // Chromium drops a push delivered right after the worker activated (in a loop of 20, the
    // first only, most runs), before the registration is stored: push until one is shown.
    for (let i = 0; i < 10; i++) {
      if (await push(message({ tag: 'warm-up' }), 'warm-up', 1000)) return;
    }
    throw new Error('Chromium showed none of 10 warm-up pushes');
  });

  afterAll(async () => {
    await context?.close();
    await app?.close();
    await gcm?.close();
    rmSync(profile, { recursive: true, force: true });
  });

  /** Every notification the worker shows now, as `getNotifications()` gives them. */
  const notifications = () =>
    page.evaluate(async () => {
      const reg = await navigator.serviceWorker.ready;
      return (await reg.getNotifications()).map((n) => ({
        title: n.title,
        body: n.body,
        tag: n.tag,
        icon: n.icon,
        data: n.data as { id?: string } | null,
        // Chromium has it; TypeScript's DOM lib does not.
        timestamp: (n as Notification & { timestamp: number }).timestamp,
      }));
    });
  type Shown = Awaited<ReturnType<typeof notifications>>[number];

  /**
   * Sends `data` as a push message; the notification of `tag` once one shown after the send is
   * there (`withinMs` at most), without its timestamp. Each test uses tags of its own: Chromium names a
   * tagged notification by origin and tag, so closing one and showing the next of the same tag
   * would race. Chromium now and then drops a message the DevTools protocol hands a worker that is
   * starting (seen under a loaded machine's `make test`, 1 in about 1,800): a message not shown
   * within `RESEND_MS` is sent again (the worker is deterministic, and a tag shows one
   * notification however often it is shown).
   */
  async function push(
    data: string,
    tag: string,
    withinMs = 10_000,
  ): Promise<Omit<Shown, 'timestamp'> | undefined> {
    const sent = await page.evaluate(() => Date.now());
    const end = Date.now() + withinMs;
    for (let resendAt = 0; Date.now() < end; ) {
      if (Date.now() >= resendAt) {
        await cdp.send('ServiceWorker.deliverPushMessage', {
          origin: `${app.origin}/`,
          registrationId,
          data,
        });
        resendAt = Date.now() + RESEND_MS;
      }
      const n = (await notifications()).find((x) => x.tag === tag && x.timestamp >= sent);
      if (n) {
        const { timestamp: _, ...rest } = n;
        return rest;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return undefined;
  }

  const message = (over: Record<string, unknown> = {}) =>
    JSON.stringify({
      v: 1,
      id: 'e3',
      ids: ['e3'],
      count: 1,
      title: 'Order shipped',
      body: 'Your parcel is on its way',
      url: '/orders/42',
      icon: 'https://cdn.example.com/icon.png',
      tag: 'herald-r1',
      payload: { order: 42 },
      ...over,
    });

  it('shows one push as its title, body, icon and tag, with url, id, ids and the payload as data', async () => {
    expect(await push(message(), 'herald-r1')).toEqual({
      title: 'Order shipped',
      body: 'Your parcel is on its way',
      tag: 'herald-r1',
      icon: 'https://cdn.example.com/icon.png',
      data: { url: '/orders/42', id: 'e3', ids: ['e3'], count: 1, payload: { order: 42 } },
    });
  });

  it('collapses by tag: a newer push for several events replaces the shown one and says how many more', async () => {
    expect(await push(message({ tag: 'herald-r2' }), 'herald-r2')).toMatchObject({
      data: { id: 'e3' },
    });
    const newer = message({
      id: 'e5',
      ids: ['e5', 'e4', 'e3'],
      count: 3,
      title: 'Order delivered',
      body: 'At your door',
      tag: 'herald-r2',
    });
    expect(await push(newer, 'herald-r2')).toEqual({
      title: 'Order delivered',
      body: 'At your door (+2 more)',
      tag: 'herald-r2',
      icon: 'https://cdn.example.com/icon.png',
      data: {
        url: '/orders/42',
        id: 'e5',
        ids: ['e5', 'e4', 'e3'],
        count: 3,
        payload: { order: 42 },
      },
    });
    // Without a body the count is the body; another tag (another recipient) is another notification.
    const other = message({
      tag: 'herald-r3',
      body: undefined,
      count: 2,
      ids: ['e7', 'e6'],
      id: 'e7',
      url: undefined,
      icon: undefined,
      payload: undefined,
    });
    expect(await push(other, 'herald-r3')).toEqual({
      title: 'Order shipped',
      body: '(+1 more)',
      tag: 'herald-r3',
      icon: '',
      data: { id: 'e7', ids: ['e7', 'e6'], count: 2 },
    });
    const shown = (await notifications()).filter(
      (n) => n.tag === 'herald-r2' || n.tag === 'herald-r3',
    );
    expect(shown.map((n) => [n.tag, n.data?.id])).toEqual([
      ['herald-r2', 'e5'],
      ['herald-r3', 'e7'],
    ]);
  });

  it.each([
    ['text that is not JSON', 'not json at all'],
    [
      'JSON that is not a PushMessage (no title)',
      JSON.stringify({ v: 1, id: 'x', ids: [], count: 1, tag: 't' }),
    ],
    ['a count of 0', message({ count: 0 })],
    ['a version it does not know', message({ v: 2 })],
    ['an empty message', ''],
  ])('shows a generic notification for %s (a silent push is penalised)', async (_name, data) => {
    expect(await push(data, 'herald')).toEqual({
      title: 'New notification',
      body: '',
      tag: 'herald',
      icon: '',
      data: { count: 1 },
    });
  });
});
