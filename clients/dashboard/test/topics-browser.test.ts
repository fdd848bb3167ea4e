import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSocket, request, type Stack, type TestSocket } from '@herald/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountOf,
  buildDashboard,
  openChromium,
  signUp,
  startDashboardStack,
  until,
} from './support.js';

const APP = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Its own build folder: the other browser tests build at the same time in other workers. */
const DIST = mkdtempSync(join(tmpdir(), 'herald-dashboard-topics-'));
/** Screenshots of every run (gitignored). */
const ARTIFACTS = join(APP, 'test-artifacts');
/** Generous: two shared cores, a browser and the whole stack. */
const UI_TIMEOUT = 180_000;

/**
 * The Topics page (issue 44) in real headless Chromium against the stack: members put through
 * ingress's API as a customer's backend would, one event sent to the topic, and the page shows
 * the topic with its member count and the fan-out with its progress (one member online, its copy
 * sent; the others' queued, pending).
 */
describe('the Topics page, in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let sock: TestSocket | undefined;

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
    await sock?.close();
    await browser?.close();
    await stack?.stop();
    rmSync(DIST, { recursive: true, force: true });
  });

  it(
    "shows the account's topic, its member count and the fan-out's progress",
    async () => {
      await signUp(page, origin, 'topics');
      await page.getByRole('link', { name: 'Topics' }).click();
      await page.getByRole('heading', { name: 'Topics', level: 1 }).waitFor();
      await page.getByText('No topics yet.').waitFor();

      const account = await accountOf(page);
      const key = await stack.createKey({ account, kind: 'test', client: 'mobile' });
      const members = Array.from({ length: 4 }, () => randomUUID());
      const put = await request(
        'PUT',
        `${stack.baseUrl}/topics/project:42.followers/members`,
        stack.ca,
        { api_key: key.key, recipients: members },
      );
      expect(put.status).toBe(200);
      sock = openSocket(stack.wsUrl, stack.ca, {
        apiKey: key.key,
        recipient: members[0] as string,
        v1: true,
      });
      await sock.opened;
      const sent = await request('POST', `${stack.baseUrl}/notify`, stack.ca, {
        topic: 'project:42.followers',
        payload: { title: 'New comment' },
        api_key: key.key,
        client: 'mobile',
      });
      expect(sent.status).toBe(202);
      await sock.waitForEvents(1);

      // The page reads again on Refresh (and by itself while a fan-out is pending).
      const fanout = page.getByTestId('fanout-row');
      await until(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        const n = async (k: string) =>
          Number(await fanout.getByTestId(`fanout-${k}`).textContent());
        // The live copy is `sent` once its socket proved it (`delivered` once the edge's record is in).
        expect((await n('sent')) + (await n('delivered'))).toBe(1);
        expect(await n('pending')).toBe(3);
      }, 60_000);
      const topic = page.getByTestId('topic-row');
      expect(await topic.count()).toBe(1);
      expect(await topic.locator('td').first().textContent()).toBe('project:42.followers');
      expect(await topic.getByTestId('topic-members').textContent()).toBe('4');
      const cells = await fanout.locator('td').allTextContents();
      expect(cells.slice(0, 4)).toEqual([sent.body.id, 'project:42.followers', 'pending', '4']);
      expect(cells[5]).toBe('3');
      expect(cells[7]).toBe('0');
      await page.screenshot({ path: join(ARTIFACTS, 'topics.png'), fullPage: true });
    },
    UI_TIMEOUT,
  );
});
