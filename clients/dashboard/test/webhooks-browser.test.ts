import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Stack, WebhookReceiver } from '@herald/testkit';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard, openChromium, signUp, startDashboardStack, until } from './support.js';

const APP = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Its own build folder: the other browser tests build at the same time in other workers. */
const DIST = mkdtempSync(join(tmpdir(), 'herald-dashboard-webhooks-'));
/** Screenshots of every run (gitignored). */
const ARTIFACTS = join(APP, 'test-artifacts');
/** Generous: two shared cores, a browser and the whole stack. */
const UI_TIMEOUT = 180_000;

/**
 * The Webhooks page (issue 39) in real headless Chromium against the stack, with the status
 * service sending to a local HTTPS receiver of its own CA: an endpoint is created with chosen
 * events (its secret shown once), a test event is sent and its attempt listed (time, type,
 * HTTP status, latency), a replay, a new secret, delete.
 */
describe('the Webhooks page, in headless Chromium', () => {
  let receiver: WebhookReceiver;
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    receiver = await WebhookReceiver.start();
    await buildDashboard(DIST);
    ({ stack, origin } = await startDashboardStack(
      DIST,
      ['auth', 'status'],
      {},
      {
        status: {
          WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
          // The receiver listens on 127.0.0.1, as a developer's does under `make dev`.
          WEBHOOK_ALLOW_PRIVATE: 'true',
          WEBHOOK_CA_FILE: receiver.caFile,
          WEBHOOK_POLL_MS: '50',
        },
      },
    ));
    ({ browser, page } = await openChromium(1000));
    // Rotating a secret and deleting ask for a confirmation.
    page.on('dialog', (d) => void d.accept());
  }, UI_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await receiver?.stop();
    rmSync(DIST, { recursive: true, force: true });
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `webhooks-${name}.png`), fullPage: true });

  it(
    'creates an endpoint to a local HTTPS receiver, sends a test event and lists its attempt',
    async () => {
      await signUp(page, origin, 'webhooks');

      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
      await page.getByText('No endpoints yet: add one above.').waitFor();
      const url = receiver.url('/dashboard');
      await page.getByLabel('Endpoint URL').fill(url);
      await page.getByLabel('event.read').uncheck();
      await page.getByLabel('event.failed').uncheck();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = (await page.getByTestId('webhook-secret').textContent()) ?? '';
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      await shot('created');
      await page.getByRole('button', { name: 'I have saved it' }).click();
      expect(await page.getByTestId('webhook-secret').count()).toBe(0);

      const endpoint = page.getByTestId('webhook-endpoint');
      await until(async () => expect(await endpoint.count()).toBe(1));
      expect(await endpoint.getByText(url).count()).toBe(1);
      expect(await page.getByTestId('webhook-events').textContent()).toBe(
        'event.sent, event.queued, event.delivered',
      );
      expect(await page.getByTestId('webhook-state').textContent()).toBe('active');

      await page.getByRole('button', { name: 'Send a test event' }).click();
      await until(async () =>
        expect(await page.getByTestId('webhook-attempts').textContent()).toMatch(
          /webhook\.testHTTP 200\d+ ms/,
        ),
      );
      // Sent: nothing waits for it any more (the list is read again with the attempts).
      await until(async () =>
        expect(await page.getByTestId('webhook-pending').textContent()).toBe('0'),
      );
      await shot('attempt');
      // The receiver got it, signed with the secret the page showed once.
      const [arrival] = receiver.at('/dashboard');
      expect(arrival).toBeDefined();
      expect(new Webhook(secret).verify(arrival?.body ?? '', arrival?.headers ?? {})).toMatchObject(
        { type: 'webhook.test', data: { status: 'test' } },
      );
      expect(await page.getByTestId('webhook-attempts').textContent()).toContain(
        arrival?.headers['webhook-id'],
      );

      await page.getByLabel('Replay since').fill('2020-01-01T00:00');
      await page.getByRole('button', { name: 'Replay', exact: true }).click();
      await until(async () =>
        expect(await page.getByRole('status').textContent()).toBe('Replay queued 0 message(s).'),
      );

      await page.getByRole('button', { name: 'Rotate secret' }).click();
      const rotated = (await page.getByTestId('webhook-secret').textContent()) ?? '';
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(secret);
      await page.getByRole('button', { name: 'I have saved it' }).click();

      await page.getByRole('button', { name: 'Delete' }).click();
      await until(async () =>
        expect(await page.getByText('No endpoints yet: add one above.').count()).toBe(1),
      );
      await shot('deleted');
    },
    UI_TIMEOUT,
  );
});
