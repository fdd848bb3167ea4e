import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSocket, type Stack } from '@herald/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildDashboard,
  notifyWithCurl,
  openChromium,
  SHIPPED_PLANS,
  startDashboardStack,
  until,
} from './support.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const APP = join(HERE, '..');
const DIST = join(APP, 'dist');
/** Screenshots of every run (gitignored); docs/dashboard.png is a copy of one of them. */
const ARTIFACTS = join(APP, 'test-artifacts');
/**
 * The dashboard, built as shipped and served by auth, in real headless Chromium against the whole
 * stack (status service included): sign up, Test key, an event sent with curl counted pending,
 * then delivered on the chart and in the lookup; Live keys on a paid account; the debug console.
 */
describe('dashboard in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let testKey = '';
  const email = `browser-${Date.now()}@test.herald`;
  const password = 'a long enough passphrase';

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
    page.on('dialog', (d) => void d.accept());
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  it('the landing page shows the login at once: no 401, nothing logged in red', async () => {
    const fresh = await browser.newPage();
    const refused: string[] = [];
    fresh.on('response', (r) => {
      if (r.status() >= 400) refused.push(`${r.status()} ${new URL(r.url()).pathname}`);
    });
    fresh.on('console', (m) => {
      if (m.type() === 'error') refused.push(m.text());
    });
    await fresh.goto(`${origin}/`);
    await fresh.getByRole('heading', { name: 'Log in' }).waitFor();
    await fresh.waitForLoadState('networkidle');
    expect(refused).toEqual([]);
    await fresh.close();
  });

  it('a wrong password points to the "Create an account" link, not to the API', async () => {
    await page.goto(`${origin}/`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Log in' }).click();
    expect(await page.getByRole('alert').textContent()).toBe(
      'The email or the password is wrong: check both, or use "Create an account" below.',
    );
    expect(await page.getByRole('button', { name: 'Create an account' }).count()).toBe(1);
  });

  it('signs up and shows the Test key with its countdown', async () => {
    await page.goto(`${origin}/`);
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create an account' }).first().click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('button', { name: 'Generate the Test key' }).click();
    testKey = (await page.getByTestId('new-key').textContent()) ?? '';
    expect(testKey).toMatch(/^hk_test_/);
    await until(async () =>
      expect(await page.getByTestId('test-countdown').textContent()).toMatch(/^3h 59m/),
    );
    await expect(page.getByText('contact support to reset it')).toBeTruthy();
    await shot('1-keys');
  });

  it("shows a free account the Test key's limits, the only key it can hold, and calls its plan Free", async () => {
    await page.goto(`${origin}/#plan`);
    const limits = SHIPPED_PLANS.test_key_limits;
    await until(async () =>
      expect(await page.getByTestId('limit-test-connections').textContent()).toBe(
        `0 of ${limits.connections}`,
      ),
    );
    expect(await page.getByTestId('limit-test-rate').textContent()).toBe(
      `${limits.dispatch_rate}/s, burst ${limits.dispatch_burst}`,
    );
    expect(await page.getByTestId('limit-test-queue').textContent()).toBe(
      `at most ${limits.queue_per_recipient}`,
    );
    // No Live column: the free plan's own limits are for Live keys it cannot have.
    expect(await page.locator('[data-testid^="limit-live-"]').count()).toBe(0);
    expect(await page.locator('.card h2').first().textContent()).toMatch(/^Free free/);
    expect(
      await page.getByRole('table', { name: 'Plan catalogue with prices' }).textContent(),
    ).toContain('Free');
    await shot('1b-plan-free');
  });

  it('counts an event sent with curl as pending, then delivered on the chart and in the lookup', async () => {
    const to = crypto.randomUUID();
    const answer = await notifyWithCurl(stack, {
      recipient: to,
      payload: { hello: 'curl' },
      api_key: testKey,
    });
    expect(answer.status).toBe('User offline, notification saved');

    await page.goto(`${origin}/#delivery`);
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      expect(await page.getByTestId('count-pending').textContent()).toBe('1');
    });
    const sock = openSocket(stack.wsUrl, stack.ca, { apiKey: testKey, recipient: to, v1: true });
    await sock.opened;
    await sock.waitForFrames(1);
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      expect(await page.getByTestId('count-delivered').textContent()).toBe('1');
      expect(await page.getByTestId('open-connections').textContent()).toBe('1');
    });
    expect(
      await page.locator('.tile', { has: page.getByTestId('open-connections') }).textContent(),
    ).toBe('1open connection');
    // The chart's accessible summary carries the same figures.
    expect(await page.locator('figure.chart figcaption').textContent()).toContain('delivered: 1');
    expect(await page.locator('figure.chart canvas').count()).toBeGreaterThan(0);

    await page.getByLabel('Event id').fill(answer.id);
    await page.getByRole('button', { name: 'Find' }).click();
    await until(async () => {
      const rows = page.getByTestId('event-row');
      expect(await rows.count()).toBe(1);
      expect(await rows.first().textContent()).toContain('delivered');
    });
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Recipient').fill(to);
    await page.getByRole('button', { name: 'Find' }).click();
    await until(async () =>
      expect(await page.getByTestId('event-row').first().textContent()).toContain(answer.id),
    );
    // Never the payload.
    expect(await page.content()).not.toContain('curl"');
    await shot('2-delivery');
    await sock.close();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByLabel('Recipient').fill('');
    await page.getByRole('button', { name: 'Find' }).click();
    // On a phone every column of a recent event is on screen, none cut off past the edge.
    const cells = page.getByTestId('event-row').first().locator('td');
    expect(await cells.count()).toBe(5);
    for (const cell of await cells.all()) {
      const box = await cell.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 390, (await cell.textContent()) ?? '').toBe(
        true,
      );
    }
    // Each under its column's name, the header row being out of sight.
    expect(await cells.last().evaluate((e) => getComputedStyle(e, '::before').content)).toBe(
      '"Delivered / failed"',
    );
    await shot('3-delivery-phone');
    await page.setViewportSize({ width: 1200, height: 900 });
  });

  it('round-trips a test event through the debug console, and closes its listener', async () => {
    await page.goto(`${origin}/#debug`);
    await page.getByLabel('API key (kept in this tab only)').fill(testKey);
    await page.getByRole('button', { name: 'Open listener' }).click();
    await until(async () =>
      expect(await page.getByTestId('listener-state').textContent()).toBe('Listener: connected'),
    );
    // The listener's row keeps its distance from the label under it.
    const row = await page.locator('.listener').boundingBox();
    const below = await page.getByText('Payload (JSON)').boundingBox();
    expect(row && below && below.y - (row.y + row.height)).toBeGreaterThanOrEqual(8);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await until(async () => {
      expect(await page.getByTestId('notify-answer').textContent()).toMatch(
        /^HTTP 200: sent\nid [0-9a-f-]{36}$/,
      );
      expect(await page.getByTestId('received').textContent()).toContain(
        'Hello from the debug console',
      );
    });
    await shot('4-debug');
    await page.getByRole('button', { name: 'Close listener' }).click();
    expect(await page.getByTestId('listener-state').textContent()).toBe('Listener: closed');
    expect(await page.getByRole('button', { name: 'Open listener' }).count()).toBe(1);
  });

  it("says a refused listener is refused and why, and shows a failed send's own message", async () => {
    // A web key of another account, registered for another origin than the dashboard's.
    const { id } = await stack.createAccount();
    const web = await stack.createKey({
      account: id,
      kind: 'test',
      client: 'web',
      domain: 'https://app.example.com',
    });
    await page.goto(`${origin}/#debug`);
    await page.reload();
    await page.getByLabel('API key (kept in this tab only)').fill(web.key);
    await page.getByLabel('Client').selectOption('web');
    await page.getByRole('button', { name: 'Open listener' }).click();
    await until(async () =>
      expect(await page.getByTestId('listener-state').textContent()).toBe('Listener: refused'),
    );
    expect(await page.getByTestId('listener-error').textContent()).toMatch(
      /^origin_mismatch \(Origin\): .*https:\/\/app\.example\.com/,
    );
    // Refused for good: the button offers to try again, not to close what is not open.
    expect(await page.getByRole('button', { name: 'Open listener' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await until(async () =>
      expect(await page.getByTestId('notify-answer').textContent()).toBe(
        "HTTP 403: Failed to send/save notification\norigin_mismatch (Origin): Origin does not match the key's registered domain: requests must come from https://app.example.com",
      ),
    );
    // The send did not clear why the listener was refused.
    expect(await page.getByTestId('listener-error').textContent()).toMatch(/^origin_mismatch/);
    await shot('4b-debug-refused');
  });

  it('creates and revokes a Live key once the account is on a paid plan', async () => {
    const me = (await page.evaluate(async () => (await fetch('/v1/account')).json())) as {
      id: string;
    };
    const until365 = new Date(Date.now() + 365 * 86_400_000).toISOString();
    await stack.admin([
      'account',
      'set-plan',
      '--account',
      me.id,
      '--plan',
      'hobby',
      '--until',
      until365,
      '--json',
    ]);
    // Only the hash differs from the current URL, so goto alone would not reload the account.
    await page.goto(`${origin}/#keys`);
    await page.reload();
    await page.getByRole('button', { name: 'Create a Live key' }).click();
    const live = (await page.getByTestId('new-key').textContent()) ?? '';
    expect(live).toMatch(/^hk_live_/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByRole('button', { name: 'I have saved it' }).click();
    const prefix = live.slice(0, 12);
    expect(await page.getByTestId('key-state').textContent()).toBe('active');
    const revoke = page.getByRole('button', { name: `Revoke key ${prefix}` });
    // Destructive, so not dressed as the page's main action (the filled accent of "Create").
    const look = (b: typeof revoke) => b.evaluate((e) => getComputedStyle(e).backgroundColor);
    const create = page.getByRole('button', { name: 'Create a Live key' });
    expect(await look(revoke)).not.toBe(await look(create));
    expect(await look(revoke)).toBe('rgb(255, 255, 255)');
    await shot('5-live-key-active');
    await revoke.click();
    await until(async () =>
      expect(await page.getByTestId('key-state').textContent()).toMatch(/^revoked /),
    );
    expect(await revoke.count()).toBe(0);
    await shot('5-live-key-revoked');
  }, 120_000);

  it('creates a subscribe key that requires tokens: its signing secret shown once, rotated on demand', async () => {
    const form = page.locator('form', {
      has: page.getByRole('button', { name: 'Create a Live key' }),
    });
    await form.getByLabel('Scope').selectOption('subscribe');
    await form.getByLabel('Require recipient tokens').check();
    await form.getByRole('button', { name: 'Create a Live key' }).click();
    const key = (await page.getByTestId('new-key').textContent()) ?? '';
    const secret = (await page.getByTestId('new-signing-secret').textContent()) ?? '';
    expect(key).toMatch(/^hk_live_/);
    expect(secret).toMatch(/^hk_sign_[0-9A-Za-z]{43}$/);
    await shot('6-key-with-signing-secret');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.getByTestId('new-signing-secret').count()).toBe(0);
    const prefix = key.slice(0, 12);
    const row = page.locator('tr', { has: page.getByText(`${prefix}…`) });
    expect(await row.getByTestId('key-scope').textContent()).toBe('subscribe, tokens required');
    // The list never shows the secret again; a rotation shows a new one, once.
    expect(await page.content()).not.toContain(secret);
    await row.getByRole('button', { name: `Rotate the signing secret of ${prefix}` }).click();
    const rotated = (await page.getByTestId('new-signing-secret').textContent()) ?? '';
    expect(rotated).toMatch(/^hk_sign_/);
    expect(rotated).not.toBe(secret);
    expect(await page.getByTestId('new-key').count()).toBe(0);
    await page.getByRole('button', { name: 'I have saved it' }).click();
  }, 120_000);

  it("creates an inbox key: the list states each key's mode and retention", async () => {
    const form = page.locator('form', {
      has: page.getByRole('button', { name: 'Create a Live key' }),
    });
    await form.getByLabel('Scope').selectOption('both');
    await form.getByLabel('Keep every event (inbox, read state on the server)').check();
    await form.getByLabel('Inbox days').fill('45');
    await form.getByRole('button', { name: 'Create a Live key' }).click();
    const key = (await page.getByTestId('new-key').textContent()) ?? '';
    expect(key).toMatch(/^hk_live_/);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    const row = page.locator('tr', { has: page.getByText(`${key.slice(0, 12)}…`) });
    expect(await row.getByTestId('key-mode').textContent()).toBe('inbox, 45 days');
    const modes = await page.getByTestId('key-mode').allTextContents();
    expect(modes).toContain('default: live events not stored');
    expect(await page.getByTestId('test-mode').textContent()).toBe(
      'default: live events not stored',
    );
    await shot('7-inbox-key');
  }, 120_000);

  it('after a password reset, the login form keeps the email and not the password', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Forgot your password?' }).click();
    const { token } = (await stack.admin([
      'account',
      'reset-token',
      '--email',
      email,
      '--json',
    ])) as {
      token: string;
    };
    await page.getByLabel('Reset token').fill(token);
    const fresh = 'another long enough passphrase';
    await page.getByLabel('New password').fill(fresh);
    await page.getByRole('button', { name: 'Reset your password' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    expect(await page.getByRole('status').textContent()).toBe(
      'Password changed: log in with the new one.',
    );
    expect(await page.getByLabel('Email').inputValue()).toBe(email);
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    await page.getByLabel('Password').fill(fresh);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
  });
});
