import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Stack } from '@herald/testkit';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_HINTS } from '../src/key-hints.js';
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
const DIST = mkdtempSync(join(tmpdir(), 'herald-dashboard-keys-'));
const ARTIFACTS = join(APP, 'test-artifacts');
const UI_TIMEOUT = 180_000;

/** The vertical centre of an element. */
async function middle(l: Locator): Promise<number> {
  const box = await l.boundingBox();
  if (!box) throw new Error('not on screen');
  return box.y + box.height / 2;
}

/**
 * The Keys page and the sign-in card as a new user meets them (issue 45): checkboxes beside their
 * words, key names, lines that do not wrap, a form that starts again from its defaults, the
 * choices explained, a rotation that asks first and says how long the old secret works, the Test
 * key's tokens; sign-in forms that forget the last one's error and password.
 */
describe('the Keys page and sign-in, in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;
  const dialogs: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await buildDashboard(DIST);
    ({ stack, origin } = await startDashboardStack(DIST, ['auth']));
    ({ browser, page } = await openChromium(900));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.accept();
    });
  }, UI_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(DIST, { recursive: true, force: true });
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `keys-${name}.png`), fullPage: true });

  it(
    'sign-in: switching forms clears the error and never carries the password into Reset',
    async () => {
      await page.goto(`${origin}/`);
      await page.getByLabel('Email').fill('nobody@test.herald');
      await page.getByLabel('Password').fill('the wrong password');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('alert').waitFor();
      await page.getByRole('button', { name: 'Forgot your password?' }).click();
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(await page.getByLabel('New password').inputValue()).toBe('');
      await page.getByLabel('New password').fill('x');
      await page.getByRole('button', { name: 'Create an account' }).click();
      expect(await page.getByLabel('Password').inputValue()).toBe('');

      // A taken email: the message wraps inside the card at 375 px.
      const email = await signUp(page, origin, 'taken-with-a-rather-long-local-part-for-wrapping');
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.setViewportSize({ width: 375, height: 800 });
      await page.getByRole('button', { name: 'Create an account' }).click();
      expect(await page.getByRole('alert').count()).toBe(0);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill('a long enough passphrase');
      await page.getByRole('button', { name: 'Create an account' }).first().click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      const card = await page.locator('form.card').boundingBox();
      const box = await alert.boundingBox();
      expect(card && box && box.x + box.width <= card.x + card.width - 8).toBe(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        375,
      );
      await shot('0-signin-taken-375');
      await page.setViewportSize({ width: 1366, height: 900 });
    },
    UI_TIMEOUT,
  );

  it(
    'names the Test key, explains the choices, and puts each checkbox beside its words',
    async () => {
      await signUp(page, origin, 'keys');
      for (const hint of [KEY_HINTS.scope, KEY_HINTS.tokens, KEY_HINTS.inbox]) {
        expect(await page.getByText(hint).count()).toBe(1);
      }
      const box = page.getByLabel('Require recipient tokens');
      const words = page.locator('label', { hasText: 'Require recipient tokens' });
      expect(Math.abs((await middle(box)) - (await middle(words)))).toBeLessThan(4);
      const checkbox = await box.boundingBox();
      const label = await words.boundingBox();
      expect(checkbox && label && label.height < 2 * checkbox.height + 8).toBe(true);

      await page.getByLabel('Name').fill('  trying Herald ');
      await page.getByRole('button', { name: 'Generate the Test key' }).click();
      const key = (await page.getByTestId('new-key').textContent()) ?? '';
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await until(async () =>
        expect(await page.getByTestId('key-name').textContent()).toBe('trying Herald'),
      );
      await page.getByRole('button', { name: `Rename key ${key.slice(0, 12)}` }).click();
      await page.getByLabel(`New name of ${key.slice(0, 12)}`).fill('my first key');
      await page.getByRole('button', { name: 'Save' }).click();
      await until(async () =>
        expect(await page.getByTestId('key-name').textContent()).toBe('my first key'),
      );
      // Tokens on the Test key: none yet, so the card offers them; then it offers a rotation.
      expect(await page.getByTestId('test-tokens').textContent()).toMatch(/^not required/);
      await page
        .getByRole('button', { name: `Require recipient tokens for ${key.slice(0, 12)}` })
        .click();
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await until(async () =>
        expect(await page.getByTestId('test-tokens').textContent()).toMatch(/^required/),
      );
      dialogs.length = 0;
      await page
        .getByRole('button', { name: `Rotate the signing secret of ${key.slice(0, 12)}` })
        .click();
      await page.getByTestId('new-signing-secret').waitFor();
      // The real overlap: TOKEN_SECRET_OVERLAP_MS's default, 24 hours.
      expect(dialogs).toEqual([
        expect.stringMatching(
          /^Rotate the signing secret of my first key \(hk_test_.{4}…\)\? .*keep working for 24 hours, then/,
        ),
      ]);
      expect(await page.getByTestId('previous-secret-until').textContent()).toMatch(
        /^Tokens signed with the previous secret keep working until /,
      );
      await shot('1-test-key-rotated');
      await page.getByRole('button', { name: 'I have saved it' }).click();
    },
    UI_TIMEOUT,
  );

  it(
    'lists Live keys by name on one line each, and starts the next key from the defaults',
    async () => {
      const until365 = new Date(Date.now() + 365 * 86_400_000).toISOString();
      const me = await accountOf(page);
      await stack.admin([
        'account',
        'set-plan',
        '--account',
        me,
        '--plan',
        'hobby',
        '--until',
        until365,
        '--json',
      ]);
      await page.goto(`${origin}/#keys`);
      await page.reload();
      const form = page.locator('form', {
        has: page.getByRole('button', { name: 'Create a Live key' }),
      });
      await form.getByLabel('Name').fill('checkout backend');
      await form.getByLabel('Require recipient tokens').check();
      await form.getByLabel('Keep every event (inbox, read state on the server)').check();
      await form.getByRole('button', { name: 'Create a Live key' }).click();
      await page.getByRole('button', { name: 'I have saved it' }).click();
      // Back to the defaults: no silent "tokens required" and "inbox 30" for the next key.
      expect(await form.getByLabel('Name').inputValue()).toBe('');
      expect(await form.getByLabel('Require recipient tokens').isChecked()).toBe(false);
      expect(
        await form.getByLabel('Keep every event (inbox, read state on the server)').isChecked(),
      ).toBe(false);
      expect(await form.getByLabel('Scope').inputValue()).toBe('both');

      const row = page.locator('tr', { hasText: 'checkout backend' });
      expect(await row.getByTestId('key-mode').textContent()).toBe('inbox, 30 days');
      // The prefix and the dates each on one line, even at 375 px.
      for (const width of [1366, 375]) {
        await page.setViewportSize({ width, height: 900 });
        for (const cell of await row.locator('td.nowrap').all()) {
          const lines = await cell.evaluate((td) => {
            const r = document.createRange();
            r.selectNodeContents(td);
            return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size;
          });
          expect(lines, (await cell.textContent()) ?? '').toBe(1);
        }
      }
      await shot('2-live-keys-375');
      await page.setViewportSize({ width: 1366, height: 900 });
      // The name in the admin CLI's list too.
      const listed = (await stack.admin(['key', 'list', '--account', me, '--json'])) as {
        keys: Array<{ name: string | null }>;
      };
      expect(listed.keys.map((k) => k.name)).toEqual(['checkout backend', 'my first key']);
      await shot('3-live-keys');
    },
    UI_TIMEOUT,
  );
});
