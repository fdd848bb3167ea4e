import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openSocket, type Stack, type StackOptions, startStack } from '@herald/testkit';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@herald/testkit/browser';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const HERE = dirname(fileURLToPath(import.meta.url));
const APP = join(HERE, '..');
const DIST = join(APP, 'dist');
/** Screenshots of every run (gitignored); docs/dashboard.png is a copy of one of them. */
const ARTIFACTS = join(APP, 'test-artifacts');

/** Polls an assertion until it holds (the page refreshes figures when asked, the pipeline lags). */
async function until(check: () => Promise<void>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

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
    await run('npx', ['vite', 'build', '--logLevel', 'warn'], { cwd: APP });
    const opts = {
      services: ['auth', 'ingress-api', 'socket-edge', 'status'],
      env: { auth: { DASHBOARD_DIR: DIST } as Record<string, string> },
    } satisfies StackOptions;
    stack = await startStack(opts);
    // The debug console needs ingress's and the edge's URLs, known only once the stack has its
    // ports: auth reads them at its (re)start from the same options object.
    opts.env.auth.DASHBOARD_INGRESS_URL = stack.baseUrl;
    opts.env.auth.DASHBOARD_WS_URL = stack.wsUrl;
    await stack.restart('auth');
    origin = `https://127.0.0.1:${stack.ports.auth}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS],
    });
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on('dialog', (d) => void d.accept());
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

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

  it('counts an event sent with curl as pending, then delivered on the chart and in the lookup', async () => {
    const to = crypto.randomUUID();
    const { stdout } = await run('curl', [
      '-sS',
      '--cacert',
      stack.caFile,
      '-H',
      'Content-Type: application/json',
      '-d',
      JSON.stringify({
        recipient: to,
        payload: { hello: 'curl' },
        api_key: testKey,
        client: 'mobile',
      }),
      `${stack.baseUrl}/notify`,
    ]);
    const answer = JSON.parse(stdout) as { status: string; id: string };
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
    await shot('3-delivery-phone');
    await page.setViewportSize({ width: 1200, height: 900 });
  });

  it('round-trips a test event through the debug console', async () => {
    await page.goto(`${origin}/#debug`);
    await page.getByLabel('API key (kept in this page only)').fill(testKey);
    await page.getByRole('button', { name: 'Open listener' }).click();
    await until(async () =>
      expect(await page.getByTestId('listener-state').textContent()).toContain('connected'),
    );
    await page.getByRole('button', { name: 'Send test event' }).click();
    await until(async () => {
      expect(await page.getByTestId('notify-answer').textContent()).toContain('sent');
      expect(await page.getByTestId('received').textContent()).toContain(
        'Hello from the debug console',
      );
    });
    await shot('4-debug');
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
    await page.getByRole('button', { name: `Revoke key ${prefix}` }).click();
    await until(async () =>
      expect(await page.getByRole('table').textContent()).toContain('revoked'),
    );
    await shot('5-live-key-revoked');
  }, 120_000);
});
