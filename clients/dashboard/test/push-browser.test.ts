import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FcmSimulator, type Stack } from '@herald/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountOf,
  buildDashboard,
  notifyWithCurl,
  openChromium,
  signUp,
  startDashboardStack,
  until,
} from './support.js';

const run = promisify(execFile);
const APP = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Its own build folder: the other browser tests build at the same time in other workers. */
const DIST = mkdtempSync(join(tmpdir(), 'herald-dashboard-push-'));
const ARTIFACTS = join(APP, 'test-artifacts');
/** Generous: two shared cores, a browser and the whole stack. */
const UI_TIMEOUT = 240_000;

/**
 * The Push page (issue 40) in real headless Chromium against auth, ingress-api and the status
 * service, the status service sending FCM to the test kit's FCM simulator: a VAPID key generated
 * and shown, a file that is not a service account refused naming the field, a service account
 * the simulator made uploaded and its public parts shown, an APNs field refused by the API named;
 * then a device registered at ingress with a push key is found by its recipient, sent a test push
 * the simulator accepts, an event no socket proved is pushed and shown as its last push, and the
 * subscription is deleted.
 */
describe('the Push page, in headless Chromium', () => {
  let fcm: FcmSimulator;
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    fcm = await FcmSimulator.start();
    await buildDashboard(DIST);
    ({ stack, origin } = await startDashboardStack(
      DIST,
      ['auth', 'ingress-api', 'status'],
      {},
      {
        status: {
          WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
          // The simulator listens on 127.0.0.1 over http, as under `make dev`.
          PUSH_ALLOW_PRIVATE: 'true',
          FCM_ORIGIN: fcm.url,
          FCM_TOKEN_URI: fcm.tokenUri,
        },
      },
    ));
    ({ browser, page } = await openChromium(1400));
    // A new VAPID key pair and deleting a subscription ask for a confirmation.
    page.on('dialog', (d) => void d.accept());
  }, UI_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await fcm?.close();
    rmSync(DIST, { recursive: true, force: true });
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `push-${name}.png`), fullPage: true });

  /** `POST {base}/push/subscriptions` with curl, as a native app's backend call would. */
  const registerDevice = async (apiKey: string, recipient: string, token: string) => {
    const { stdout } = await run('curl', [
      '-sS',
      '--cacert',
      stack.caFile,
      '-H',
      'Content-Type: application/json',
      '-d',
      JSON.stringify({
        api_key: apiKey,
        recipient,
        client: 'mobile',
        kind: 'fcm',
        token,
        device: 'pixel-8',
      }),
      `${stack.baseUrl}/push/subscriptions`,
    ]);
    return JSON.parse(stdout) as { id: string };
  };

  it(
    'generates VAPID, uploads an FCM service account, lists, tests and deletes a subscription',
    async () => {
      await signUp(page, origin, 'push');

      await page.getByRole('link', { name: 'Push', exact: true }).click();
      await page.getByRole('heading', { name: 'Push', exact: true }).waitFor();
      await until(async () =>
        expect(await page.getByTestId('push-vapid-public-key').textContent()).toBe('—'),
      );
      expect(await page.getByTestId('push-fcm-project').textContent()).toBe('—');

      // Web Push: a key pair made by the status service, its public key shown (P-256, 65 bytes).
      await page.getByLabel('Subject (optional)').fill('mailto:ops@push.test');
      await page.getByRole('button', { name: 'Generate VAPID key' }).click();
      await until(async () =>
        expect(await page.getByTestId('push-vapid-public-key').textContent()).toMatch(
          /^B[A-Za-z0-9_-]{86}$/,
        ),
      );
      expect(await page.getByTestId('push-vapid-subject').textContent()).toBe(
        'mailto:ops@push.test',
      );

      // The app's google-services.json picked by mistake: refused before sending, field named.
      const fcmFile = page.getByLabel('Service account file (JSON)');
      await fcmFile.setInputFiles({
        name: 'google-services.json',
        mimeType: 'application/json',
        buffer: Buffer.from(JSON.stringify({ project_info: { project_id: 'herald-dash' } })),
      });
      await page.getByRole('button', { name: 'Upload FCM service account' }).click();
      await until(async () =>
        expect(
          await page.getByRole('alert').filter({ hasText: 'Service account file' }).textContent(),
        ).toContain('no project_id, client_email, private_key'),
      );

      const sa = fcm.serviceAccount('herald-dash');
      await fcmFile.setInputFiles({
        name: 'herald-dash-firebase-adminsdk.json',
        mimeType: 'application/json',
        buffer: Buffer.from(JSON.stringify(sa)),
      });
      await page.getByRole('button', { name: 'Upload FCM service account' }).click();
      await until(async () =>
        expect(await page.getByTestId('push-fcm-project').textContent()).toBe('herald-dash'),
      );
      expect(await page.getByTestId('push-fcm-email').textContent()).toBe(sa.client_email);
      // Never a secret on the page.
      expect(await page.content()).not.toContain('PRIVATE KEY');

      // APNs: a real .p8 with a team id Apple would never show: the API's refusal names the field.
      const p8 = generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString();
      await page.getByLabel('Key file (.p8)').setInputFiles({
        name: 'AuthKey_ABC123DEFG.p8',
        mimeType: 'application/octet-stream',
        buffer: Buffer.from(p8),
      });
      // The key id is read from Apple's file name.
      expect(await page.getByLabel('Key id').inputValue()).toBe('ABC123DEFG');
      await page.getByLabel('Team id').fill('team-1');
      await page.getByLabel('Topic (bundle id)').fill('com.example.app');
      await page.getByRole('button', { name: 'Upload APNs key' }).click();
      await until(async () =>
        expect(await page.getByRole('alert').filter({ hasText: 'Team id:' }).textContent()).toMatch(
          /^Team id: team_id must be the 10-character team id/,
        ),
      );
      await shot('credentials');

      // A push key of this account and an FCM device registered at ingress, as an app would.
      const account = await accountOf(page);
      const key = await stack.createKey({ account, kind: 'test', push: { afterMs: 0 } });
      const recipient = randomUUID();
      const token = `dash:${'F'.repeat(140)}`;
      const { id } = await registerDevice(key.key, recipient, token);
      expect(id).toBeTruthy();

      await page.getByLabel('Recipient').fill(recipient);
      await page.getByRole('button', { name: 'Find subscriptions' }).click();
      const row = page.getByTestId('push-subscription');
      await until(async () => expect(await row.count()).toBe(1));
      const cells = await row.locator('td').allTextContents();
      expect(cells.slice(0, 4)).toEqual(['fcm', 'pixel-8', key.id, expect.any(String)]);
      expect(cells[4]).toBe('never');

      await row.getByRole('button', { name: 'Send test push' }).click();
      await until(async () =>
        expect(await page.getByTestId('push-test-outcome').textContent()).toMatch(
          /^Accepted by the push service \(HTTP 200\) in \d+ ms\.$/,
        ),
      );
      expect(fcm.accepted(token)).toHaveLength(1);
      // A test push is not an event's: the subscription's last push stays as it was.
      expect(await row.locator('td').nth(4).textContent()).toBe('never');
      await shot('subscriptions');

      // An event no socket proves is pushed at once (push_after_ms 0).
      const event = await notifyWithCurl(stack, {
        recipient,
        payload: { hello: 'push' },
        api_key: key.key,
      });
      await until(async () => expect(fcm.accepted(token)).toHaveLength(2), 60_000);
      expect(JSON.stringify(fcm.accepted(token)[1]?.message)).toContain(event.id);

      // Its last push shown, then deleted: nothing more is pushed to it.
      // (the event's push, recorded once the simulator answered it).
      await until(async () => {
        await page.getByRole('button', { name: 'Find subscriptions' }).click();
        expect(await row.locator('td').nth(4).textContent()).not.toBe('never');
      }, 60_000);
      await row.getByRole('button', { name: 'Delete' }).click();
      await until(async () =>
        expect(await page.getByText('No subscriptions for this recipient.').count()).toBe(1),
      );
    },
    UI_TIMEOUT,
  );
});
