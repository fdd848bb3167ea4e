import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Stack } from '@herald/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard, openChromium, startDashboardStack, until } from './support.js';

const APP = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Its own build folder: the other browser tests build at the same time in other workers. */
const DIST = mkdtempSync(join(tmpdir(), 'herald-dashboard-tokens-'));
/** Screenshots of every run (gitignored). */
const ARTIFACTS = join(APP, 'test-artifacts');
/** Generous: two shared cores, a browser and admin CLI processes. */
const UI_TIMEOUT = 180_000;

/**
 * Recipient tokens in the dashboard (issue 46), in real headless Chromium against the stack: a
 * web inbox key made with the opt-out carries its warning, "Require tokens" turns tokens on (the
 * secret shown once), the debug console then needs a token and takes one in its token field; a
 * web inbox key made without the opt-out requires tokens from the start.
 */
describe('recipient tokens in the dashboard, in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let webKey = '';

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await buildDashboard(DIST);
    // status: the inbox store, which an inbox key's sockets are greeted from.
    ({ stack, origin } = await startDashboardStack(DIST, [
      'auth',
      'ingress-api',
      'socket-edge',
      'status',
    ]));
    ({ browser, page } = await openChromium(900));
    // "Require tokens" asks for a confirmation.
    page.on('dialog', (d) => void d.accept());
  }, UI_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(DIST, { recursive: true, force: true });
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `tokens-${name}.png`), fullPage: true });

  /** The debug console's listener with the web key (and `token`, when given): its final state. */
  const listen = async (token = '') => {
    await page.goto(`${origin}/#debug`);
    await page.reload();
    await page.getByLabel('API key (kept in this tab only)').fill(webKey);
    await page.getByLabel('Client').selectOption('web');
    await page.getByLabel('Recipient token (only for keys that require one)').fill(token);
    await page.getByRole('button', { name: 'Open listener' }).click();
    await until(async () =>
      expect(await page.getByTestId('listener-state').textContent()).toMatch(
        /^Listener: (connected|refused)$/,
      ),
    );
    const state = (await page.getByTestId('listener-state').textContent()) ?? '';
    // A refusal names its reason beside the state: kept in the answer, so a failed expectation
    // says why the socket was refused.
    const why = page.getByTestId('listener-error');
    if (state !== 'Listener: refused' || (await why.count()) === 0) return state;
    return `${state} (${await why.textContent()})`;
  };

  it(
    'warns on a web inbox key made with the opt-out, in one line with how to turn tokens on',
    async () => {
      await page.goto(`${origin}/`);
      await page.getByRole('button', { name: 'Create an account' }).click();
      await page.getByLabel('Email').fill(`tokens-${Date.now()}@test.herald`);
      await page.getByLabel('Password').fill('a long enough passphrase');
      await page.getByRole('button', { name: 'Create an account' }).first().click();
      await page.getByRole('heading', { name: 'API keys' }).waitFor();
      await page.getByLabel('Client').selectOption('web');
      await page.getByLabel('Domain').fill(origin);
      await page.getByLabel('Keep every event (inbox, read state on the server)').check();
      await page.getByLabel('Inbox days').fill('7');
      // Tokens are the default here: no "Require" box, the opt-out named instead.
      expect(await page.getByLabel('Require recipient tokens').count()).toBe(0);
      expect(await page.getByText('Recipient tokens: required for a web inbox key').count()).toBe(
        1,
      );
      await page.getByLabel('Allow unsigned recipients').check();
      await page.getByRole('button', { name: 'Generate the Test key' }).click();
      webKey = (await page.getByTestId('new-key').textContent()) ?? '';
      expect(webKey).toMatch(/^hk_test_/);
      expect(await page.getByTestId('new-signing-secret').count()).toBe(0);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      const warning = page.getByTestId('key-warning');
      await until(async () =>
        expect(await warning.textContent()).toMatch(
          /^⚠ Created without recipient tokens on purpose \(allow_unsigned_recipients\): anyone holding this public web key and a user's id can open that user's socket, read their stored inbox \(7 days\) and mark it read\. Turn tokens on: `key require-token --key [0-9a-f-]{36}` \(dashboard: Require tokens\)\. Require tokens$/,
        ),
      );
      expect(await page.getByTestId('test-scope').textContent()).toBe('both');
      await shot('1-opt-out-warning');
      // Without tokens, the console's listener opens with the key alone.
      expect(await listen()).toBe('Listener: connected');
      await page.getByRole('button', { name: 'Close listener' }).click();
    },
    UI_TIMEOUT,
  );

  it(
    '"Require tokens" shows the secret once; the console then needs a token, and takes one',
    async () => {
      await page.goto(`${origin}/#keys`);
      await page.reload();
      await page.getByRole('button', { name: /^Require recipient tokens for hk_test_/ }).click();
      const secret = (await page.getByTestId('new-signing-secret').textContent()) ?? '';
      expect(secret).toMatch(/^hk_sign_[0-9A-Za-z]{43}$/);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await until(async () =>
        expect(await page.getByTestId('test-scope').textContent()).toBe('both, tokens required'),
      );
      expect(await page.getByTestId('key-warning').count()).toBe(0);
      expect(await page.content()).not.toContain(secret);

      expect(await listen()).toMatch(/^Listener: refused \(/);
      expect(await page.getByTestId('listener-error').textContent()).toMatch(/^missing_token/);
      const to = await page.getByLabel('Recipient (UUID v4)').inputValue();
      const { keys } = (await page.evaluate(async () => (await fetch('/v1/keys')).json())) as {
        keys: Array<{ id: string }>;
      };
      const { token } = (await stack.admin([
        'token',
        'create',
        '--key',
        keys[0]?.id ?? '',
        '--recipient',
        to,
        '--json',
      ])) as { token: string };
      await page.getByLabel('API key (kept in this tab only)').fill(webKey);
      await page.getByLabel('Recipient token (only for keys that require one)').fill(token);
      await page.getByLabel('Recipient (UUID v4)').fill(to);
      await page.getByRole('button', { name: 'Open listener' }).click();
      await until(async () =>
        expect(await page.getByTestId('listener-state').textContent()).toBe('Listener: connected'),
      );
      await page.getByRole('button', { name: 'Send test event' }).click();
      await until(async () =>
        expect(await page.getByTestId('received').textContent()).toContain(
          'Hello from the debug console',
        ),
      );
      await shot('2-debug-with-token');
      await page.getByRole('button', { name: 'Close listener' }).click();
    },
    UI_TIMEOUT,
  );

  it(
    'a web inbox key made without the opt-out requires tokens from the start, and says so',
    async () => {
      const me = (await page.evaluate(async () => (await fetch('/v1/account')).json())) as {
        id: string;
      };
      await stack.admin([
        'account',
        'set-plan',
        '--account',
        me.id,
        '--plan',
        'hobby',
        '--until',
        new Date(Date.now() + 365 * 86_400_000).toISOString(),
        '--json',
      ]);
      await page.goto(`${origin}/#keys`);
      await page.reload();
      const form = page.locator('form', {
        has: page.getByRole('button', { name: 'Create a Live key' }),
      });
      await form.getByLabel('Client').selectOption('web');
      await form.getByLabel('Domain').fill('https://app.example.com');
      await form.getByLabel('Keep every event (inbox, read state on the server)').check();
      await form.getByRole('button', { name: 'Create a Live key' }).click();
      const key = (await page.getByTestId('new-key').textContent()) ?? '';
      expect(key).toMatch(/^hk_live_/);
      expect(await page.getByTestId('new-signing-secret').textContent()).toMatch(/^hk_sign_/);
      expect(
        await page.getByText('Tokens are on by default for a web key in inbox mode').count(),
      ).toBe(1);
      await shot('3-inbox-key-tokens-by-default');
      await page.getByRole('button', { name: 'I have saved it' }).click();
      const row = page.locator('tr', { has: page.getByText(`${key.slice(0, 12)}…`) });
      expect(await row.getByTestId('key-scope').textContent()).toBe('both, tokens required');
      expect(await page.getByTestId('key-warning').count()).toBe(0);
    },
    UI_TIMEOUT,
  );
});
