import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DispatchStatus, Herald } from '@herald/sdk';
import { type KeyObject, type Stack, startStack } from '@herald/testkit';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@herald/testkit/browser';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tlsRuntime } from '../../../sdk/test/stack/tls-runtime.js';
import { serveExample } from './example-site.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** Screenshots of each state, for people (gitignored; one is copied into the README). */
const ARTIFACTS = join(HERE, '..', '..', 'test-artifacts');
/** Generous: two cores shared by several test runs and a browser. */
const UI_TIMEOUT = 60_000;

describe('@herald/react in headless Chromium against the real stack', () => {
  let stack: Stack;
  let site: Awaited<ReturnType<typeof serveExample>>;
  let browser: Browser;
  let context: BrowserContext;
  let web: KeyObject;
  let runtime: ReturnType<typeof tlsRuntime>;
  let sender: Herald;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    [stack, site] = await Promise.all([
      // A closing tab's unacked event comes back quickly to the next leader.
      startStack({ env: { 'socket-edge': { ACK_WAIT_MS: '1000' } } }),
      serveExample(),
    ]);
    const { id } = await stack.createAccount();
    web = await stack.createKey({ account: id, kind: 'test', client: 'web', domain: site.origin });
    runtime = tlsRuntime(stack.ca);
    sender = new Herald({
      apiKey: web.key,
      client: 'web',
      baseUrl: stack.baseUrl,
      wsUrl: stack.wsUrl,
      fetch: runtime.fetch,
      WebSocket: runtime.WebSocket,
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [...CHROMIUM_ARGS],
    });
    context = await browser.newContext({ viewport: { width: 480, height: 520 } });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await runtime?.close();
    await stack?.stop();
  });

  const open = async (user: string, ctx: BrowserContext = context): Promise<Page> => {
    const page = await ctx.newPage();
    const q = new URLSearchParams({
      apikey: web.key,
      user,
      base: stack.baseUrl,
      ws: stack.wsUrl,
    });
    await page.goto(`${site.origin}/?${q}`);
    return page;
  };
  const bell = (page: Page, state?: 'connected' | 'disconnected') =>
    page.locator(`button[aria-haspopup]${state ? `[data-state="${state}"]` : ''}`);
  const badge = (page: Page, text: string) =>
    page.locator('[data-herald-badge]', { hasText: new RegExp(`^${text}$`) });
  const notify = (user: string, title: string) =>
    sender.notify({
      recipient: user,
      payload: { title, body: `about ${title}` },
      origin: site.origin,
    });
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });

  /** herald.v1 sockets open on the edge, from its /metrics. */
  const edgeSockets = async (): Promise<number> => {
    // /metrics is served on the edge's loopback ops listener (plain HTTP), not its public port.
    const res = await runtime.fetch(`http://127.0.0.1:${stack.opsPorts['socket-edge']}/metrics`);
    const text = await res.text();
    const sample = /^herald_open_sockets\{[^}]*framing="herald\.v1"[^}]*\}\s+(\S+)$/m.exec(text);
    if (!sample?.[1]) throw new Error(`no herald_open_sockets sample in the edge's /metrics`);
    return Number(sample[1]);
  };
  const eventually = async (check: () => Promise<boolean>, what: string) => {
    const deadline = Date.now() + UI_TIMEOUT;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('renders, turns green, counts a POST /notify, renders it through children, and opening marks it read', async () => {
    const user = randomUUID();
    const page = await open(user);
    await bell(page).waitFor({ timeout: UI_TIMEOUT });
    await bell(page, 'connected').waitFor({ timeout: UI_TIMEOUT });
    expect(await bell(page).getAttribute('aria-label')).toBe('Notifications: connected, no unread');
    await shot(page, '1-connected');

    const result = await notify(user, 'Order shipped');
    expect(result.status).toBe(DispatchStatus.sent);
    await badge(page, '1').waitFor({ timeout: UI_TIMEOUT });
    expect(await bell(page).getAttribute('aria-label')).toBe('Notifications: connected, 1 unread');
    await page
      .locator('[role="status"]', { hasText: /^New notification$/ })
      .waitFor({ state: 'attached', timeout: UI_TIMEOUT });
    await shot(page, '2-unread');

    await bell(page).click();
    await page
      .locator('.note-title', { hasText: 'Order shipped' })
      .waitFor({ timeout: UI_TIMEOUT });
    await page.locator('[data-herald-badge]').waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    expect(await bell(page).getAttribute('aria-label')).toBe('Notifications: connected, no unread');
    await shot(page, '3-open');
    await page.keyboard.press('Escape');
    await page.locator('[role="dialog"]').waitFor({ state: 'detached', timeout: UI_TIMEOUT });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-haspopup'))).toBe(
      'dialog',
    );
    // Read state survives a reload.
    await page.reload();
    await bell(page, 'connected').waitFor({ timeout: UI_TIMEOUT });
    expect(await page.locator('[data-herald-badge]').count()).toBe(0);
    await page.close();
  });

  it('turns red when the socket edge stops and green again when it is back', async () => {
    const page = await open(randomUUID());
    await bell(page, 'connected').waitFor({ timeout: UI_TIMEOUT });
    await stack.stopService('socket-edge');
    try {
      await bell(page, 'disconnected').waitFor({ timeout: UI_TIMEOUT });
      expect(await bell(page).getAttribute('aria-label')).toBe(
        'Notifications: disconnected, no unread',
      );
      await shot(page, '4-disconnected');
    } finally {
      await stack.startService('socket-edge');
    }
    // Backoff grows while the edge is down: allow for its longest wait so far.
    await bell(page, 'connected').waitFor({ timeout: 90_000 });
    await page.close();
  }, 180_000);

  it('shows on load an event queued while the page was closed', async () => {
    const user = randomUUID();
    const result = await notify(user, 'While you were away');
    expect(result.status).toBe(DispatchStatus.queued);
    const page = await open(user);
    await badge(page, '1').waitFor({ timeout: UI_TIMEOUT });
    await bell(page).click();
    await page
      .locator('.note-title', { hasText: 'While you were away' })
      .waitFor({ timeout: UI_TIMEOUT });
    await shot(page, '5-queued');
    await page.close();
  });

  it('two tabs share one socket and both show the event; closing the leader keeps delivery going', async () => {
    // A fresh context: its own storage and locks, like a second browser profile.
    const ctx = await browser.newContext({ viewport: { width: 480, height: 520 } });
    try {
      await eventually(
        async () => (await edgeSockets()) === 0,
        'no socket left from earlier tests',
      );
      const user = randomUUID();
      const leader = await open(user, ctx);
      await bell(leader, 'connected').waitFor({ timeout: UI_TIMEOUT });
      const follower = await open(user, ctx);
      await bell(follower, 'connected').waitFor({ timeout: UI_TIMEOUT });
      await bell(follower).waitFor({ timeout: UI_TIMEOUT });
      expect(await edgeSockets()).toBe(1);

      expect((await notify(user, 'First')).status).toBe(DispatchStatus.sent);
      await badge(leader, '1').waitFor({ timeout: UI_TIMEOUT });
      await badge(follower, '1').waitFor({ timeout: UI_TIMEOUT });
      expect(await edgeSockets()).toBe(1);
      await shot(follower, '6-follower');

      await leader.close();
      // The follower takes the lock and opens the one socket itself.
      await eventually(async () => (await edgeSockets()) === 1, 'the new leader socket');
      await bell(follower, 'connected').waitFor({ timeout: UI_TIMEOUT });
      const second = await notify(user, 'Second');
      expect([DispatchStatus.sent, DispatchStatus.queued]).toContain(second.status);
      await badge(follower, '2').waitFor({ timeout: UI_TIMEOUT });
      await bell(follower).click();
      await follower.locator('.note-title', { hasText: 'Second' }).waitFor({ timeout: UI_TIMEOUT });
      // Each event once, newest first: nothing lost or duplicated in the takeover.
      expect(await follower.locator('.note-title').allTextContents()).toEqual(['Second', 'First']);
      // Opening in one tab reads in every tab: a new tab agrees.
      const third = await open(user, ctx);
      await bell(third, 'connected').waitFor({ timeout: UI_TIMEOUT });
      expect(await third.locator('[data-herald-badge]').count()).toBe(0);
      expect(await edgeSockets()).toBe(1);
    } finally {
      await ctx.close();
    }
  }, 240_000);
});
