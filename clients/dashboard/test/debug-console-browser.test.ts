import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Stack } from '@herald/testkit';
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
const DIST = mkdtempSync(join(tmpdir(), 'herald-dashboard-debug-'));
const ARTIFACTS = join(APP, 'test-artifacts');
const UI_TIMEOUT = 180_000;
const KEY_INPUT = 'API key (kept in this tab only)';

/**
 * The debug console as a new user meets it (issue 45): it picks from the account's keys (never a
 * revoked one), keeps a key's value across a reload in this tab, says what to do with a revoked
 * key without naming the admin CLI, forgets the last key's errors on switching, shows an empty
 * state and says how web keys of another domain can be tried.
 */
describe('the debug console, in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let testKey = '';

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await buildDashboard(DIST);
    ({ stack, origin } = await startDashboardStack(DIST, ['auth', 'ingress-api', 'socket-edge']));
    ({ browser, page } = await openChromium(900));
    page.on('dialog', (d) => void d.accept());
  }, UI_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(DIST, { recursive: true, force: true });
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `debug-${name}.png`), fullPage: true });

  const listenerState = async () => {
    await until(async () =>
      expect(await page.getByTestId('listener-state').textContent()).toMatch(
        /^Listener: (connected|refused)$/,
      ),
    );
    return page.getByTestId('listener-state').textContent();
  };

  it(
    'picks the Test key by name, still filled after a reload, with an empty state until an event arrives',
    async () => {
      await signUp(page, origin, 'debug');
      await page.getByLabel('Name').fill('tryout');
      await page.getByRole('button', { name: 'Generate the Test key' }).click();
      testKey = (await page.getByTestId('new-key').textContent()) ?? '';
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await page.goto(`${origin}/#debug`);
      await page.reload();
      const picker = page.getByLabel('Key to try');
      await until(async () =>
        expect(await picker.locator('option:checked').textContent()).toBe(
          `Test tryout (${testKey.slice(0, 12)}…) (mobile)`,
        ),
      );
      expect(await page.getByLabel(KEY_INPUT).inputValue()).toBe(testKey);
      expect(await page.getByTestId('received-empty').textContent()).toMatch(
        /^Nothing received yet/,
      );
      expect(await page.getByTestId('web-key-note').textContent()).toContain(
        `Web keys work here only when their domain is this dashboard's (${origin})`,
      );
      await page.getByRole('button', { name: 'Open listener' }).click();
      expect(await listenerState()).toBe('Listener: connected');
      await page.getByRole('button', { name: 'Send test event' }).click();
      await until(async () =>
        expect(await page.getByTestId('received').textContent()).toContain(
          'Hello from the debug console',
        ),
      );
      expect(await page.getByTestId('received-empty').count()).toBe(0);
      await shot('1-picked');
    },
    UI_TIMEOUT,
  );

  it(
    "forgets the last key's errors on switching key or recipient",
    async () => {
      await page.getByLabel(KEY_INPUT).fill(`hk_test_${'0'.repeat(43)}`);
      expect(await page.getByLabel('Key to try').inputValue()).toBe('');
      await page.getByRole('button', { name: 'Send test event' }).click();
      await until(async () =>
        expect(await page.getByTestId('notify-answer').textContent()).toMatch(/^HTTP 401/),
      );
      await page.getByRole('button', { name: 'Open listener' }).click();
      expect(await listenerState()).toBe('Listener: refused');
      await page.getByLabel('Recipient (UUID v4)').fill(crypto.randomUUID());
      expect(await page.getByTestId('listener-error').count()).toBe(0);
      expect(await page.getByTestId('notify-answer').textContent()).toBe('—');
      await page.getByRole('button', { name: 'Open listener' }).click();
      expect(await listenerState()).toBe('Listener: refused');
      await page.getByLabel('Key to try').selectOption({ index: 0 });
      expect(await page.getByTestId('listener-error').count()).toBe(0);
      expect(await page.getByTestId('listener-state').textContent()).toBe('Listener: closed');
      expect(await page.getByLabel(KEY_INPUT).inputValue()).toBe(testKey);
    },
    UI_TIMEOUT,
  );

  it(
    'never replaces a key field the user took before the key list came (a paste then appended to the pick)',
    async () => {
      // The real answer to the key list, held until the field has the cursor.
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      await page.route('**/v1/keys', async (route) => {
        await held;
        await route.continue();
      });
      try {
        await page.reload();
        await page.getByLabel(KEY_INPUT).focus();
        release();
        const picker = page.getByLabel('Key to try');
        await until(async () => expect(await picker.locator('option').count()).toBe(2));
        expect(await page.getByLabel(KEY_INPUT).inputValue()).toBe('');
        await page.getByLabel(KEY_INPUT).fill(testKey);
        expect(await page.getByLabel(KEY_INPUT).inputValue()).toBe(testKey);
        // Typed or pasted, a listed key is still named in the picker.
        expect(await picker.inputValue()).toBe(testKey.slice(0, 12));
      } finally {
        release();
        await page.unroute('**/v1/keys');
      }
    },
    UI_TIMEOUT,
  );

  it(
    'never offers a revoked key, and tells a dashboard user what to do with one',
    async () => {
      const me = await accountOf(page);
      const { keys } = (await stack.admin(['key', 'list', '--account', me, '--json'])) as {
        keys: Array<{ id: string }>;
      };
      await stack.admin(['key', 'revoke', '--key', keys[0]?.id ?? '', '--json']);
      await page.reload();
      await until(async () => expect(await page.getByTestId('web-key-note').count()).toBe(1));
      expect(await page.getByLabel('Key to try').locator('option').allTextContents()).toEqual([
        'Another key: paste it below',
      ]);
      expect(await page.getByLabel(KEY_INPUT).inputValue()).toBe('');
      await page.getByLabel(KEY_INPUT).fill(testKey);
      await page.getByRole('button', { name: 'Open listener' }).click();
      expect(await listenerState()).toBe('Listener: refused');
      const said = (await page.getByTestId('listener-error').textContent()) ?? '';
      expect(said).toMatch(
        /^key_revoked.*: this key is revoked: pick another key above, or create one on the Keys page/,
      );
      expect(said).not.toMatch(/admin|CLI|reset-test/);
      await shot('2-revoked');
    },
    UI_TIMEOUT,
  );
});
