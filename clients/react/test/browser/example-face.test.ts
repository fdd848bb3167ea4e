import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Herald } from '@herald/sdk';
import { type KeyObject, type Stack, startStack } from '@herald/testkit';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@herald/testkit/browser';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tlsRuntime } from '../../../sdk/test/stack/tls-runtime.js';
import { serveExample } from './example-site.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = join(HERE, '..', '..', 'test-artifacts');
const UI_TIMEOUT = 60_000;

/** The area two boxes share, px². */
async function overlap(a: Locator, b: Locator): Promise<{ shared: number; ofB: number }> {
  const [x, y] = [await a.boundingBox(), await b.boundingBox()];
  if (!x || !y) throw new Error('not on screen');
  const w = Math.max(0, Math.min(x.x + x.width, y.x + y.width) - Math.max(x.x, y.x));
  const h = Math.max(0, Math.min(x.y + x.height, y.y + y.height) - Math.max(x.y, y.y));
  return { shared: w * h, ofB: (w * h) / (y.width * y.height) };
}

/**
 * `make example`'s bell and its list page as a user meets them (issue 45), at 375 and 1366 px:
 * the badge beside the bell, not over it; a time on every notification, in the dropdown and on
 * the "View all" page; the page shows each body; "Mark all read" is styled as a button.
 */
describe("the example's bell and list page, in headless Chromium", () => {
  let stack: Stack;
  let site: Awaited<ReturnType<typeof serveExample>>;
  let browser: Browser;
  let web: KeyObject;
  let runtime: ReturnType<typeof tlsRuntime>;
  let sender: Herald;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    [stack, site] = await Promise.all([
      startStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] }),
      serveExample('dist-face'),
    ]);
    const { id } = await stack.createAccount();
    web = (await stack.admin([
      'key',
      'create',
      '--account',
      id,
      '--kind',
      'test',
      '--client',
      'web',
      '--domain',
      site.origin,
      '--inbox-days',
      '7',
      '--allow-unsigned-recipients',
      '--json',
    ])) as KeyObject;
    runtime = tlsRuntime(stack.ca);
    sender = new Herald({
      apiKey: web.key,
      client: 'web',
      baseUrl: stack.baseUrl,
      wsUrl: stack.wsUrl,
      fetch: runtime.fetch,
      WebSocket: runtime.WebSocket,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await runtime?.close();
    await stack?.stop();
  });

  const open = async (width: number, user: string, path = '/'): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width, height: 720 } });
    const q = new URLSearchParams({ apikey: web.key, user, base: stack.baseUrl, ws: stack.wsUrl });
    await page.goto(`${site.origin}${path}?${q}`);
    return page;
  };

  for (const width of [375, 1366]) {
    it(
      `at ${width} px: the badge beside the bell, times in the dropdown and on the page, bodies listed`,
      async () => {
        const user = randomUUID();
        await sender.notify({
          recipient: user,
          payload: { title: 'Order shipped', body: 'Your parcel left the warehouse' },
          origin: site.origin,
        });
        const page = await open(width, user);
        const badge = page.locator('[data-herald-badge]', { hasText: /^1$/ });
        await badge.waitFor({ timeout: UI_TIMEOUT });
        const bellIcon = page.locator('button[aria-haspopup] svg');
        // The badge sits on the corner: at most a quarter of the bell under it (it covered half).
        expect((await overlap(badge, bellIcon)).ofB).toBeLessThan(0.25);

        await page.locator('button[aria-haspopup]').click();
        const item = page.locator('[data-herald-item]').first();
        await item.waitFor({ timeout: UI_TIMEOUT });
        expect(await item.locator('.note-time').textContent()).toBe('just now');
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
          width,
        );
        const dropdown = await page.locator('[data-herald-dropdown]').boundingBox();
        expect(dropdown && dropdown.x >= 0 && dropdown.x + dropdown.width <= width).toBe(true);
        await page.screenshot({ path: join(ARTIFACTS, `face-bell-${width}.png`) });

        const list = await open(width, user, '/notifications');
        const row = list.locator('.page-item').first();
        await row.waitFor({ timeout: UI_TIMEOUT });
        expect(await row.locator('.note-body').textContent()).toBe(
          'Your parcel left the warehouse',
        );
        expect(await row.locator('.note-time').textContent()).toBe('just now');
        const markAll = list.getByRole('button', { name: 'Mark all read' });
        const look = await markAll.evaluate((e) => {
          const s = getComputedStyle(e);
          return { bg: s.backgroundColor, radius: s.borderRadius };
        });
        // Styled (the browser's default grey button before): the accent, or grey while nothing is
        // unread (opening the dropdown above read the one event).
        expect(look.radius).toBe('6px');
        expect(['rgb(29, 78, 216)', 'rgb(156, 163, 175)']).toContain(look.bg);
        expect(await list.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
          width,
        );
        await list.screenshot({ path: join(ARTIFACTS, `face-list-${width}.png`) });
        await page.close();
        await list.close();
      },
      UI_TIMEOUT * 3,
    );
  }
});
