import { randomUUID } from 'node:crypto';
import { DispatchStatus, Herald } from '@herald/sdk';
import { type KeyObject, type Stack, startStack } from '@herald/testkit';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@herald/testkit/browser';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { tlsRuntime } from '../../../sdk/test/stack/tls-runtime.js';
import { serveExample } from './example-site.js';

/** Generous: two cores shared by several test runs and a browser. */
const UI_TIMEOUT = 60_000;

/**
 * Inbox mode (issue 32 item 3) in real Chromium against the real stack: two browser contexts are
 * two devices of one recipient (each its own storage, so its own device id and its own leader
 * socket), on a web key made with `--inbox-days`.
 */
describe('@herald/react inbox mode: two devices of one user in headless Chromium', () => {
  let stack: Stack;
  let site: Awaited<ReturnType<typeof serveExample>>;
  let browser: Browser;
  let web: KeyObject;
  let runtime: ReturnType<typeof tlsRuntime>;
  let sender: Herald;
  const devices: BrowserContext[] = [];

  beforeAll(async () => {
    [stack, site] = await Promise.all([
      startStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] }),
      serveExample('dist-inbox'),
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
      // The example page connects with the key alone (no token server): the explicit opt-out of
      // the tokens a web inbox key requires by default (issue 46).
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
    for (const ctx of devices) await ctx.close();
    await browser?.close();
    await site?.close();
    await runtime?.close();
    await stack?.stop();
  });

  /** A new device: a context of its own (storage, locks), like another browser or computer. */
  const device = async (): Promise<BrowserContext> => {
    const ctx = await browser.newContext({ viewport: { width: 560, height: 720 } });
    devices.push(ctx);
    return ctx;
  };
  const open = async (ctx: BrowserContext, user: string, path = '/', pageSize?: number) => {
    const page = await ctx.newPage();
    // What the pages said (the bell's onError warnings), shown when a test fails.
    const said: string[] = [];
    page.on('console', (m) => said.push(`${path} ${m.type()}: ${m.text()}`));
    onTestFailed(() => console.log(said.join('\n')));
    const q = new URLSearchParams({ apikey: web.key, user, base: stack.baseUrl, ws: stack.wsUrl });
    if (pageSize) q.set('page', String(pageSize));
    await page.goto(`${site.origin}${path}?${q}`);
    return page;
  };
  const bell = (page: Page, state?: 'connected' | 'disconnected') =>
    page.locator(`button[aria-haspopup]${state ? `[data-state="${state}"]` : ''}`);
  const badge = (page: Page, text: string) =>
    page.locator('[data-herald-badge]', { hasText: new RegExp(`^${text}$`) });
  const noBadge = (page: Page) =>
    page.locator('[data-herald-badge]').waitFor({ state: 'detached', timeout: UI_TIMEOUT });
  const notify = (user: string, title: string) =>
    sender.notify({ recipient: user, payload: { title }, origin: site.origin });
  /** The page's list: each title, with ✓ when read. */
  const listed = (page: Page) =>
    page
      .locator('.page-item')
      .evaluateAll((lis) =>
        lis.map(
          (li) =>
            `${li.querySelector('.note-title')?.textContent}${(li as HTMLElement).dataset.read === 'true' ? '✓' : ''}`,
        ),
      );
  const eventually = async <T>(read: () => Promise<T>, want: T, what: string): Promise<void> => {
    const deadline = Date.now() + UI_TIMEOUT;
    let last: T | undefined;
    for (;;) {
      last = await read();
      if (JSON.stringify(last) === JSON.stringify(want)) return;
      if (Date.now() > deadline) {
        throw new Error(
          `${what}: wanted ${JSON.stringify(want)}, last saw ${JSON.stringify(last)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it("both devices get an event queued while both were offline; reading on one clears the other's badge", async () => {
    const user = randomUUID();
    const queued = await notify(user, 'While both were away');
    expect(queued.status).toBe(DispatchStatus.queued);

    const [laptop, phone] = [await device(), await device()];
    const onLaptop = await open(laptop, user);
    const onPhone = await open(phone, user);
    await bell(onLaptop, 'connected').waitFor({ timeout: UI_TIMEOUT });
    await bell(onPhone, 'connected').waitFor({ timeout: UI_TIMEOUT });
    const ids = await Promise.all(
      [onLaptop, onPhone].map((p) => p.evaluate(() => localStorage.getItem('herald.device'))),
    );
    expect(ids[0], 'two devices: two device ids').not.toBe(ids[1]);
    await badge(onLaptop, '1').waitFor({ timeout: UI_TIMEOUT });
    await badge(onPhone, '1').waitFor({ timeout: UI_TIMEOUT });

    // The phone opens its bell: the event is there, and reading it there clears the laptop too.
    await bell(onPhone).click();
    await onPhone
      .locator('.note-title', { hasText: 'While both were away' })
      .waitFor({ timeout: UI_TIMEOUT });
    await noBadge(onPhone);
    await noBadge(onLaptop);
    expect(await bell(onLaptop).getAttribute('aria-label')).toBe(
      'Notifications: connected, no unread',
    );
    // The laptop got the event too (its own catch-up), already read.
    await bell(onLaptop).click();
    await onLaptop
      .locator('.note-title', { hasText: 'While both were away' })
      .waitFor({ timeout: UI_TIMEOUT });
    await onLaptop.keyboard.press('Escape');

    // A live event reaches both; reading it on the laptop clears the phone.
    await onPhone.keyboard.press('Escape');
    expect((await notify(user, 'Live one')).status).toBe(DispatchStatus.sent);
    await badge(onLaptop, '1').waitFor({ timeout: UI_TIMEOUT });
    await badge(onPhone, '1').waitFor({ timeout: UI_TIMEOUT });
    await bell(onLaptop).click();
    await noBadge(onPhone);
    // A reload agrees: the count is the server's, not this browser's.
    await onPhone.reload();
    await bell(onPhone, 'connected').waitFor({ timeout: UI_TIMEOUT });
    expect(await onPhone.locator('[data-herald-badge]').count()).toBe(0);
  }, 240_000);

  it('the notifications page lists history a page at a time, with read state from every device and live arrivals on top', async () => {
    const user = randomUUID();
    for (const n of [1, 2, 3, 4, 5]) {
      expect((await notify(user, `N${n}`)).status).toBe(DispatchStatus.queued);
    }
    const [laptop, phone] = [await device(), await device()];
    const page = await open(laptop, user, '/notifications', 2);
    await bell(page, 'connected').waitFor({ timeout: UI_TIMEOUT });
    await badge(page, '5').waitFor({ timeout: UI_TIMEOUT });
    await eventually(() => listed(page), ['N5', 'N4'], 'the first page');
    await page.locator('.load-more').click();
    await eventually(() => listed(page), ['N5', 'N4', 'N3', 'N2'], 'the second page');
    await page.locator('.load-more').click();
    await eventually(() => listed(page), ['N5', 'N4', 'N3', 'N2', 'N1'], 'the last page');
    await page.locator('.load-more').waitFor({ state: 'detached', timeout: UI_TIMEOUT });

    // Read one on the laptop's page: the phone's page lists it read, both badges say 4.
    await page.locator('.page-item[data-id] .mark-one').nth(2).click();
    await eventually(() => listed(page), ['N5', 'N4', 'N3✓', 'N2', 'N1'], 'N3 read');
    const other = await open(phone, user, '/notifications', 10);
    await eventually(() => listed(other), ['N5', 'N4', 'N3✓', 'N2', 'N1'], 'the phone page');
    await badge(page, '4').waitFor({ timeout: UI_TIMEOUT });
    await badge(other, '4').waitFor({ timeout: UI_TIMEOUT });
    // A second tab of the laptop: not the leader, it pages through the leader tab's socket.
    const follower = await open(laptop, user, '/notifications', 3);
    await eventually(() => listed(follower), ['N5', 'N4', 'N3✓'], "a follower tab's first page");
    await follower.locator('.load-more').click();
    await eventually(() => listed(follower), ['N5', 'N4', 'N3✓', 'N2', 'N1'], 'and its second');
    await follower.close();

    // A live event: on top of both pages, unread.
    expect((await notify(user, 'N6')).status).toBe(DispatchStatus.sent);
    await eventually(() => listed(page), ['N6', 'N5', 'N4', 'N3✓', 'N2', 'N1'], 'N6 on top');
    await eventually(() => listed(other), ['N6', 'N5', 'N4', 'N3✓', 'N2', 'N1'], 'N6 on the phone');
    await badge(other, '5').waitFor({ timeout: UI_TIMEOUT });

    // Mark all read on the phone: the laptop's page and badge follow.
    await other.locator('.mark-all').click();
    await eventually(
      () => listed(page),
      ['N6✓', 'N5✓', 'N4✓', 'N3✓', 'N2✓', 'N1✓'],
      'all read on the laptop',
    );
    await noBadge(page);
    await noBadge(other);
  }, 240_000);
});
