import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type DarajaSimulator,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  SIM_CONSUMER_KEY,
  SIM_CONSUMER_SECRET,
  startDarajaSimulator,
  TEST_PHONES,
} from '@herald/payments/simulator';
import { freePort, type Stack } from '@herald/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildDashboard,
  notifyWithCurl,
  openChromium,
  startDashboardStack,
  until,
} from './support.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const APP = join(HERE, '..');
/**
 * Its own build folder: browser.test.ts builds into dist/ at the same time in another worker, and
 * a build empties its folder first.
 */
const DIST = mkdtempSync(join(tmpdir(), 'herald-dashboard-checkout-'));
/**
 * Screenshots of every run (gitignored); docs/dashboard-checkout.png and
 * docs/dashboard-checkout-live.png are copies of checkout-2-succeeded.png and
 * checkout-1-pending.png, made by hand (a test run never changes a committed file).
 */
const ARTIFACTS = join(APP, 'test-artifacts');

/** A frame the page's Herald socket received: a herald.v1 envelope. */
interface SocketFrame {
  type: string;
  id?: string;
  payload?: { type?: string; payment_id?: string; status?: string };
  events?: Array<Omit<SocketFrame, 'type' | 'events'>>;
}

/**
 * Paying for a plan from the dashboard, in real headless Chromium against the whole stack (auth
 * with billing on, ingress, the edge) and the Daraja simulator. The simulator answers a prompt
 * only when the test says so (`sim.settle`), so the page is seen pending first; no callback
 * reaches auth (its URL is unreachable), so auth's scheduled STK query settles the payment, as
 * when Daraja's callback is lost. The page follows the payment over its own Herald socket (the
 * frames it receives are recorded here); it polls only while that socket is down.
 */
describe('dashboard checkout in headless Chromium', () => {
  let sim: DarajaSimulator;
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;
  /** Every herald.v1 frame the page's sockets received, in order. */
  const frames: SocketFrame[] = [];
  /** Every GET /v1/billing/payments/<id> the page made, by payment id. */
  const reads = new Map<string, number>();
  /** The Live key made once the account is on Hobby. */
  let liveKey = '';

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await buildDashboard(DIST);
    sim = await startDarajaSimulator({ resultDelayMs: null });
    ({ stack, origin } = await startDashboardStack(
      DIST,
      // ingress and the edge: the page's socket, and auth's notices dispatched to it.
      // status: the Plan page's dispatch figure comes from it.
      ['auth', 'ingress-api', 'socket-edge', 'status'],
      {
        BILLING_PROVIDER: 'mpesa',
        BILLING_CALLBACK_URL: `https://localhost:${await freePort()}`,
        MPESA_BASE_URL: sim.url,
        MPESA_CONSUMER_KEY: SIM_CONSUMER_KEY,
        MPESA_CONSUMER_SECRET: SIM_CONSUMER_SECRET,
        MPESA_SHORTCODE: SANDBOX_SHORTCODE,
        MPESA_PASSKEY: SANDBOX_PASSKEY,
        PAYMENT_QUERY_INTERVAL_MS: '200',
        BILLING_SWEEP_INTERVAL_MS: '200',
      },
    ));
    ({ browser, page } = await openChromium(1000));
    page.on('websocket', (ws) =>
      ws.on('framereceived', ({ payload }) => {
        const f = JSON.parse(String(payload)) as SocketFrame;
        // The SDK's socket is batch=1: queued notices may come several to an `events` frame.
        frames.push(
          ...(f.type === 'events' ? (f.events ?? []).map((e) => ({ ...e, type: 'event' })) : [f]),
        );
      }),
    );
    page.on('request', (req) => {
      const id = /\/v1\/billing\/payments\/([0-9a-f-]{36})$/.exec(new URL(req.url()).pathname)?.[1];
      if (id && req.method() === 'GET') reads.set(id, (reads.get(id) ?? 0) + 1);
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await sim?.close();
    rmSync(DIST, { recursive: true, force: true });
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const status = () => page.getByTestId('payment-status');
  const via = () => page.getByTestId('live-updates').getAttribute('data-via');
  /** The payment notices of `paymentId` the page's socket received. */
  const noticesOf = (paymentId: string) =>
    frames.filter((f) => f.type === 'event' && f.payload?.payment_id === paymentId);
  const planHeading = () => page.locator('.card h2').first();

  /** The simulator's customer answers the newest prompt (to `phone`). */
  async function answerPrompt(phone: string): Promise<void> {
    await until(async () => expect(sim.pushes.at(-1)?.phone).toBe(phone));
    const push = sim.pushes.at(-1);
    if (!push) throw new Error('no prompt was sent');
    await sim.settle(push.checkoutRequestId);
  }

  it('upgrades to Hobby by M-Pesa, then creates a Live key', async () => {
    await page.goto(`${origin}/`);
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByLabel('Email').fill(`checkout-${Date.now()}@test.herald`);
    await page.getByLabel('Password').fill('a long enough passphrase');
    await page.getByRole('button', { name: 'Create an account' }).first().click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.getByText('Live keys need a paid plan').count()).toBe(1);

    await page.goto(`${origin}/#plan`);
    await page.getByRole('button', { name: 'Pay for Hobby' }).click();
    await page.getByRole('heading', { name: /Pay for Hobby: KES 1,200/ }).waitFor();

    // The server validates the number and its error names the field.
    const phone = page.getByLabel('M-Pesa phone number');
    await phone.fill('0812 345');
    await phone.blur();
    expect(await page.locator('#phone-hint').textContent()).toMatch(/does not look like/);
    await page.getByRole('button', { name: 'Send the M-Pesa prompt' }).click();
    // Said once, under the number, in place of the hint that said it before.
    await until(async () =>
      expect(await page.getByTestId('phone-error').textContent()).toMatch(/0812 345/),
    );
    expect(await page.getByText(/does not look like|0812 345/).count()).toBe(1);
    expect(sim.pushes).toHaveLength(0);

    await phone.fill('0708 374 149');
    await page.getByRole('button', { name: 'Send the M-Pesa prompt' }).click();
    await until(async () => expect(await status().getAttribute('data-status')).toBe('pending'));
    expect(await status().textContent()).toMatch(/enter your PIN/);
    // The page's own Herald socket is up: it follows the payment live, and does not poll.
    await until(async () => expect(await via()).toBe('herald'));
    const paymentId = (await page.locator('.facts code').first().textContent()) ?? '';
    // The pending notice came over the socket, and the page read the payment once for it.
    await until(async () => {
      expect(noticesOf(paymentId).map((f) => f.payload?.status)).toContain('pending');
      expect(reads.get(paymentId) ?? 0).toBeGreaterThanOrEqual(1);
    });
    const readsBefore = reads.get(paymentId) ?? 0;
    // While the payment stays pending and no notice comes, the page reads nothing: the 1 s
    // fallback poll would have read it about three times in this window. (A wait for an absence:
    // there is no event to await.)
    await new Promise((r) => setTimeout(r, 3000));
    expect(reads.get(paymentId) ?? 0).toBe(readsBefore);
    await shot('checkout-1-pending');

    await answerPrompt(TEST_PHONES.succeeds);
    await until(async () => expect(await status().getAttribute('data-status')).toBe('succeeded'));
    // It came over the socket: the success notice of this payment arrived as a herald.v1 event
    // (auth -> rt.dispatch -> ingress -> edge -> the page's SDK socket)...
    expect(noticesOf(paymentId).map((f) => f.payload?.status)).toContain('succeeded');
    // Settled: nothing is followed any more, so the live line is gone.
    expect(await page.getByTestId('live-updates').count()).toBe(0);
    // ...and the page read the payment once more, for that notice (its receipt and history).
    expect((reads.get(paymentId) ?? 0) - readsBefore).toBeGreaterThan(0);
    expect((reads.get(paymentId) ?? 0) - readsBefore).toBeLessThanOrEqual(
      noticesOf(paymentId).filter((f) => f.payload?.status !== 'pending').length,
    );
    expect(await status().textContent()).toMatch(
      /Payment succeeded: you are on Hobby\. Paid until/,
    );
    // The account re-read: the plan card shows the new plan and its period end.
    await until(async () => expect(await planHeading().textContent()).toMatch(/^Hobby active/));
    expect(await page.getByTestId('period-end').textContent()).not.toContain('never');
    expect(await page.getByLabel('Payment history').textContent()).toMatch(
      /prompt sent to .*: paid$/,
    );
    // The list of payments keeps it once the checkout is closed (no receipt here: the query
    // settled it, and only Daraja's lost callback carries one).
    await until(async () =>
      expect(await page.getByTestId('past-payment').first().textContent()).toMatch(
        /hobbyKES 1,200paid—$/,
      ),
    );
    await shot('checkout-2-succeeded');

    await page.getByRole('link', { name: 'Create a Live key on the Keys page' }).click();
    await page.getByRole('button', { name: 'Create a Live key' }).click();
    liveKey = (await page.getByTestId('new-key').textContent()) ?? '';
    expect(liveKey).toMatch(/^hk_live_/);
    await shot('checkout-3-live-key');
  }, 120_000);

  it("leaves the dashboard's own billing notices out of the customer's delivery figures", async () => {
    // The payment above sent this account's dashboard its notices through ingress, as events; the
    // customer's first event comes after them in the status stream, so once it is counted, they
    // have been written (or dropped) too.
    const sent = await notifyWithCurl(stack, {
      recipient: crypto.randomUUID(),
      payload: { order: 1 },
      api_key: liveKey,
    });
    expect(sent).toMatchObject({ status: 'User offline, notification saved' });
    await page.goto(`${origin}/#delivery`);
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      expect(await page.getByTestId('count-pending').textContent()).toBe('1');
    });
    // All keys: the customer's one event, nothing of the notices (sent live to this page).
    for (const s of ['sent', 'delivered', 'failed']) {
      expect(await page.getByTestId(`count-${s}`).textContent(), s).toBe('0');
    }
    expect(await page.getByTestId('event-row').count()).toBe(1);
    await shot('checkout-3b-delivery');
  });

  it('a cancelled payment leaves the plan unchanged and says so, polling while the socket is down', async () => {
    await page.goto(`${origin}/#plan`);
    const periodEnd = await page.getByTestId('period-end').textContent();
    // No edge: the page's socket cannot connect, so the page falls back to reading every second.
    await stack.stopService('socket-edge');
    await page.getByRole('button', { name: 'Pay for Startup' }).click();
    // Close is not the page's main action.
    const look = (name: string) =>
      page.getByRole('button', { name }).evaluate((e) => getComputedStyle(e).backgroundColor);
    expect(await look('Close')).toBe('rgb(255, 255, 255)');
    expect(await look('Send the M-Pesa prompt')).not.toBe('rgb(255, 255, 255)');
    // The catalogue's Free row is the Test key's limits, and says so.
    expect(await page.getByTestId('catalogue-connections-free').textContent()).toMatch(
      /\(Test key\)$/,
    );
    await page.getByLabel('M-Pesa phone number').fill(`+${TEST_PHONES.cancelled}`);
    await page.getByRole('button', { name: 'Send the M-Pesa prompt' }).click();
    await until(async () => expect(await status().getAttribute('data-status')).toBe('pending'));
    await until(async () => expect(await via()).toBe('polling'));

    await answerPrompt(TEST_PHONES.cancelled);
    await until(async () => expect(await status().getAttribute('data-status')).toBe('cancelled'));
    expect(await status().textContent()).toBe(
      'The payment was cancelled on the phone. Your plan is unchanged.',
    );
    // The payer's steps only: never the provider's callbacks or queries.
    const steps = (await page.getByLabel('Payment history').textContent()) ?? '';
    expect(steps).toContain('cancelled on the phone');
    expect(steps).not.toMatch(/callback|query|\(pending\)/);
    await shot('checkout-4-cancelled');
    await stack.startService('socket-edge');
    await page.reload();
    await until(async () => expect(await planHeading().textContent()).toMatch(/^Hobby active/));
    expect(await page.getByTestId('period-end').textContent()).toBe(periodEnd);
  }, 120_000);

  it('shows the renewal reminder before the period ends, and the lapse after it', async () => {
    const me = (await page.evaluate(async () => (await fetch('/v1/account')).json())) as {
      id: string;
    };
    const setUntil = (ms: number) =>
      stack.admin([
        'account',
        'set-plan',
        '--account',
        me.id,
        '--plan',
        'hobby',
        '--until',
        new Date(Date.now() + ms).toISOString(),
        '--json',
      ]);
    // Within RENEWAL_REMINDER_MS (7 days by default) of the end.
    await setUntil(2 * 86_400_000);
    await page.goto(`${origin}/#plan`);
    await page.reload();
    await until(async () =>
      expect(await page.getByTestId('renewal').textContent()).toMatch(
        /^Your Hobby plan ends on .*: renew it below/,
      ),
    );
    // The plan catalogue is read apart from the subscription, so its rows may come a little later.
    await until(async () =>
      expect(await page.getByRole('button', { name: 'Renew Hobby' }).count()).toBe(1),
    );
    await shot('checkout-5-reminder');

    await setUntil(-86_400_000);
    await page.reload();
    await until(async () =>
      expect(await page.getByTestId('renewal').textContent()).toMatch(
        /^Your Hobby plan lapsed on .*: Live keys are refused/,
      ),
    );
  }, 120_000);
});
