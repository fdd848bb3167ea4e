import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSocket, post, type Stack } from '@herald/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildDashboard,
  notifyWithCurl,
  openChromium,
  signUp,
  startDashboardStack,
  until,
} from './support.js';

const APP = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Its own build folder: the other browser tests build at the same time in other workers. */
const DIST = mkdtempSync(join(tmpdir(), 'herald-dashboard-delivery-'));
const ARTIFACTS = join(APP, 'test-artifacts');
const UI_TIMEOUT = 180_000;

/**
 * The delivery page as a new user meets it (issue 45): an empty chart says so on a small axis, its
 * legend shows totals and the hovered bucket's values, the page refreshes itself, a live event
 * answered 200 reads as delivered at its proof, the payload line does not deny inbox keys, and
 * the chosen key's recent refusals are listed (time, code, field, Origin, count).
 */
describe('the delivery page, in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let testKey = '';

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await buildDashboard(DIST);
    ({ stack, origin } = await startDashboardStack(DIST, [
      'auth',
      'ingress-api',
      'socket-edge',
      'status',
    ]));
    ({ browser, page } = await openChromium(900));
  }, UI_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(DIST, { recursive: true, force: true });
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `delivery-${name}.png`), fullPage: true });

  it(
    'an empty chart says "no data yet" on a small axis, its legend showing totals',
    async () => {
      await signUp(page, origin, 'delivery');
      await page.getByRole('button', { name: 'Generate the Test key' }).click();
      testKey = (await page.getByTestId('new-key').textContent()) ?? '';
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await page.goto(`${origin}/#delivery`);
      await until(async () => expect(await page.getByTestId('count-sent').textContent()).toBe('0'));
      expect(await page.getByTestId('chart-empty').textContent()).toBe(
        'No data yet: events sent in this window appear here.',
      );
      const ticks = (await page.locator('figure.chart .u-axis').nth(1).textContent()) ?? '';
      expect(ticks).not.toContain('100');
      expect(await page.locator('.u-legend .u-value').allTextContents()).toEqual(
        expect.arrayContaining(['0 in window']),
      );
      expect(await page.getByTestId('payload-note').textContent()).toMatch(
        /^Payloads are never shown here\. An inbox key keeps each event's payload/,
      );
      await shot('1-empty');
    },
    UI_TIMEOUT,
  );

  it(
    'refreshes itself, and reads a live event answered 200 as delivered at its proof',
    async () => {
      const to = crypto.randomUUID();
      const sock = openSocket(stack.wsUrl, stack.ca, { apiKey: testKey, recipient: to, v1: true });
      await sock.opened;
      const answer = await notifyWithCurl(stack, {
        recipient: to,
        payload: { hello: 'live' },
        api_key: testKey,
      });
      expect(answer.status).toBe('sent');
      // No click on Refresh: the page fetches again by itself.
      await until(async () => {
        expect(await page.getByTestId('count-sent').textContent()).toBe('1');
        const row = page.getByTestId('event-row').first();
        expect(await row.textContent()).toContain(answer.id);
      });
      const row = page.getByTestId('event-row').first();
      expect(await row.locator('.badge').textContent()).toBe('delivered live');
      const delivered = (await row.locator('td').nth(4).textContent()) ?? '';
      expect(delivered).not.toBe('—');
      expect(delivered).toBe(await row.locator('td').nth(3).textContent());
      await sock.close();

      // The legend: the window's total, and a bucket's value under the pointer.
      expect(await page.getByTestId('chart-empty').count()).toBe(0);
      const sentValue = page.locator('.u-legend .u-series').nth(1).locator('.u-value');
      expect(await sentValue.textContent()).toBe('1 in window');
      const over = await page.locator('figure.chart .u-over').boundingBox();
      if (!over) throw new Error('no chart');
      await page.mouse.move(over.x + over.width - 2, over.y + over.height / 2);
      await until(async () => expect(await sentValue.textContent()).toMatch(/^[0-9]+$/));
      await shot('2-live-delivered');
    },
    UI_TIMEOUT,
  );

  it(
    "lists the chosen key's recent refusals, with an empty state, never the payload",
    async () => {
      await page.goto(`${origin}/#delivery`);
      // The first of the filters: the key.
      const picker = page.locator('section .card.inline select').first();
      await until(async () => expect(await picker.locator('option').count()).toBeGreaterThan(1));
      await picker.selectOption({ index: 1 });
      await until(async () =>
        expect(await page.getByTestId('refusals-empty').textContent()).toBe(
          'No refusals of this key recently.',
        ),
      );
      // A bad field: refused before the key is checked, yet the body's key verifies: its refusal.
      const refused = await post(
        stack.baseUrl,
        stack.ca,
        {
          recipient: 'not a recipient!',
          payload: { secret: 'refusal-payload' },
          api_key: testKey,
          client: 'mobile',
        },
        { headers: { origin: 'https://shop.example.test' } },
      );
      expect(refused.status).toBe(400);
      // No click on Refresh: the page's own refresh brings it.
      const row = page.getByTestId('refusal-row').first();
      await until(async () => expect(await row.textContent()).toContain('recipient'));
      const cells = await row.locator('td').allTextContents();
      expect(cells.slice(1)).toEqual([
        `400 ${refused.body.error.code}`,
        'recipient',
        'https://shop.example.test',
        '/notify',
        '1',
      ]);
      const card = (await page.getByTestId('refusals').textContent()) ?? '';
      expect(card).not.toContain('refusal-payload');
      expect(card).not.toContain(testKey);
      await shot('3-refusals');
    },
    UI_TIMEOUT,
  );
});
