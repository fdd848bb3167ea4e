import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, serveGcm, servePushRoutes } from '../../../sdk/test/push/servers.js';
import { servePushSite } from './push-site.js';

/** Generous: two cores shared by several test runs and a browser. */
const UI_TIMEOUT = 60_000;

/**
 * `usePush` (`@herald/react/push`) in Chromium, bundled as an app would bundle it: a switch whose
 * clicks subscribe this browser (Chromium's own `pushManager.subscribe`, against the SDK tests'
 * GCM stand-in) and register it with the SDK tests' stand-in for ingress's push routes; and
 * `@herald/sdk/push` fetched only once the switch is used.
 */
describe('usePush in Chromium', () => {
  let site: Awaited<ReturnType<typeof servePushSite>>;
  let routes: Awaited<ReturnType<typeof servePushRoutes>>;
  let gcm: Awaited<ReturnType<typeof serveGcm>>;
  let context: BrowserContext;
  let page: Page;
  const profile = mkdtempSync(join(tmpdir(), 'herald-react-push-'));
  const user = randomUUID();

  beforeAll(async () => {
    [site, routes, gcm] = await Promise.all([servePushSite(), servePushRoutes(), serveGcm()]);
    context = await launchChromium(profile, gcm.url);
    await context.grantPermissions(['notifications'], { origin: site.origin });
    page = context.pages()[0] ?? (await context.newPage());
  }, 240_000);

  afterAll(async () => {
    await context?.close();
    await Promise.all([site?.close(), routes?.close(), gcm?.close()]);
    rmSync(profile, { recursive: true, force: true });
  });

  const open = async () => {
    await page.goto(`${site.origin}/?base=${encodeURIComponent(routes.baseUrl)}&user=${user}`);
    await page
      .locator('#push[data-supported="true"]')
      .waitFor({ state: 'attached', timeout: UI_TIMEOUT });
  };
  const state = async () => {
    const el = page.locator('#push');
    return {
      enabled: await el.getAttribute('data-enabled'),
      pending: await el.getAttribute('data-pending'),
      error: await el.getAttribute('data-error'),
    };
  };
  const settled = async (enabled: boolean) => {
    await page
      .locator(`#push[data-enabled="${enabled}"][data-pending="false"]`)
      .waitFor({ state: 'attached', timeout: UI_TIMEOUT });
  };

  it(
    'enables and disables push from clicks, loading @herald/sdk/push only then, and knows after a reload',
    async () => {
      await open();
      expect(await state()).toEqual({ enabled: 'false', pending: 'false', error: '' });
      expect(site.requested).not.toContain(site.pushChunk);
      expect(routes.state.requests).toEqual([]);

      await page.click('#on');
      await settled(true);
      expect(await state()).toEqual({ enabled: 'true', pending: 'false', error: '' });
      expect(site.requested).toContain(site.pushChunk);
      const post = routes.state.requests.find((r) => r.method === 'POST');
      expect(post?.body).toMatchObject({
        api_key: 'hk_test_push',
        recipient: user,
        client: 'web',
        kind: 'webpush',
      });

      // A new page finds this browser's subscription without loading the SDK.
      site.requested.length = 0;
      await open();
      await settled(true);
      expect(site.requested).not.toContain(site.pushChunk);

      await page.click('#off');
      await settled(false);
      expect(await state()).toEqual({ enabled: 'false', pending: 'false', error: '' });
      expect(routes.state.requests.at(-1)).toMatchObject({
        method: 'DELETE',
        path: `/push/subscriptions/${[...routes.state.ids.values()][0]}`,
        query: { api_key: 'hk_test_push', recipient: user },
      });
    },
    UI_TIMEOUT * 4,
  );

  it(
    "shows Herald's refusal as pushError and stays off",
    async () => {
      routes.state.requireToken = true;
      await open();
      await page.click('#on');
      await page
        .locator('#push[data-error="token_required"]')
        .waitFor({ state: 'attached', timeout: UI_TIMEOUT });
      expect(await state()).toEqual({
        enabled: 'false',
        pending: 'false',
        error: 'token_required',
      });
      routes.state.requireToken = false;
    },
    UI_TIMEOUT * 2,
  );
});
