import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotificationServer } from './dbus-notifications.js';
import { launchChromium, serveApp, serveGcm } from './servers.js';

/**
 * A click on a notification of `@herald/sdk/sw`, in real Chromium: the push delivered through the
 * DevTools protocol, the notification shown by Chromium on a desktop notification server (D-Bus)
 * the test runs, and clicked there, as a user's click reaches Chromium on Linux.
 */
describe('a click on a Herald notification in Chromium', () => {
  let app: Awaited<ReturnType<typeof serveApp>>;
  let gcm: Awaited<ReturnType<typeof serveGcm>>;
  let desktop: Awaited<ReturnType<typeof startNotificationServer>>;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let registrationId: string;
  const profile = mkdtempSync(join(tmpdir(), 'herald-click-'));

  beforeAll(async () => {
    [app, gcm, desktop] = await Promise.all([serveApp(), serveGcm(), startNotificationServer()]);
    context = await launchChromium(profile, gcm.url, [], {
      DBUS_SESSION_BUS_ADDRESS: desktop.address,
    });
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
  });

  afterAll(async () => {
    await context?.close();
    await Promise.all([app?.close(), gcm?.close()]);
    desktop?.close();
    rmSync(profile, { recursive: true, force: true });
  });

  /**
   * Pushes a message with `title` and `url` until the desktop shows it (Chromium drops a push
   * delivered right after the worker activated, see sw.test.ts); its desktop id.
   */
  async function pushShown(title: string, url?: string): Promise<number> {
    const data = JSON.stringify({
      v: 1,
      id: title,
      ids: [title],
      count: 1,
      title,
      tag: title,
      url,
    });
    for (let i = 0; i < 10; i++) {
      await cdp.send('ServiceWorker.deliverPushMessage', {
        origin: `${app.origin}/`,
        registrationId,
        data,
      });
      for (const end = Date.now() + 1000; Date.now() < end; ) {
        const n = desktop.shown.find((s) => s.title === title);
        if (n) return n.id;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error(`the desktop never showed ${title}`);
  }

  it('opens url (a path, against the scope) and closes the notification', async () => {
    const id = await pushShown('Order shipped', '/orders/42');
    expect(desktop.shown.find((s) => s.id === id)?.body).toContain('localhost');
    const opened = context.waitForEvent('page', { timeout: 10_000 });
    desktop.click(id);
    const tab = await opened;
    await tab.waitForLoadState();
    expect(tab.url()).toBe(`${app.origin}/orders/42`);
    expect(await tab.title()).toBe('landing /orders/42');
    await expect.poll(() => desktop.closed.includes(id)).toBe(true);
    expect(
      await page.evaluate(async () =>
        (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => n.tag),
      ),
    ).not.toContain('Order shipped');
    await tab.close();
  });

  it('focuses a window already at url instead of opening another', async () => {
    const tab = await context.newPage();
    await tab.goto(`${app.origin}/orders/7`);
    await page.bringToFront();
    const pages = context.pages().length;
    const id = await pushShown('Order delivered', '/orders/7');
    let opened = false;
    context.on('page', () => {
      opened = true;
    });
    desktop.click(id);
    await expect.poll(() => desktop.closed.includes(id)).toBe(true);
    // The worker either focuses a window at url or opens one (the test above): no new window is
    // the focus branch. The focus itself cannot be read here: Playwright emulates focus, so every
    // page's document.hasFocus() is true already. Time for a window opened after the close:
    await new Promise((r) => setTimeout(r, 1000));
    expect(opened).toBe(false);
    expect(context.pages()).toHaveLength(pages);
    await tab.close();
  });
});
