import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pusherRecipient } from '@herald/access';
import { PUSHER_APP_SUBJECT, PusherAppReply } from '@herald/proto';
import type { Stack } from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
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

const APP = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Its own build folder: the other browser tests build at the same time in other workers. */
const DIST = mkdtempSync(join(tmpdir(), 'herald-dashboard-pusher-'));
const ARTIFACTS = join(APP, 'test-artifacts');
/** Generous: two shared cores, a browser and the whole stack. */
const UI_TIMEOUT = 240_000;

/**
 * The Pusher apps page (issue 41) in real headless Chromium against auth (with ingress and the
 * status service, for the delivery page): an app is created bound to the account's key, its secret shown once
 * (and copied) is the one auth gives the edge and ingress over `rt.auth.pusher`, the snippets
 * carry its key, id and the edge's host and port; a new secret, a user id looked up to its
 * recipient on the delivery page, delete.
 */
describe('the Pusher apps page, in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;
  let nc: NatsConnection;
  /** The account's one Test key, the apps' bound key. */
  let keyId = '';

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await buildDashboard(DIST);
    ({ stack, origin } = await startDashboardStack(DIST, ['auth', 'ingress-api', 'status']));
    // The operator, standing in for the edge and ingress: what does auth give them for an app?
    nc = await connect(stack.nats.connectOptions());
    ({ browser, page } = await openChromium(1400));
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    // Rotating a secret and deleting ask for a confirmation.
    page.on('dialog', (d) => void d.accept());
  }, UI_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await nc?.close();
    await stack?.stop();
    rmSync(DIST, { recursive: true, force: true });
  });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `pusher-${name}.png`), fullPage: true });

  /** The app as auth answers the edge and ingress for it, its secret unsealed. */
  const lookup = async (appId: string) => {
    const msg = await nc.request(PUSHER_APP_SUBJECT, JSON.stringify({ v: 1, app_id: appId }), {
      timeout: 10_000,
    });
    return PusherAppReply.parse(msg.json());
  };
  const secretShown = async () => (await page.getByTestId('pusher-secret').textContent()) ?? '';

  it(
    'creates an app, shows its secret once, fills in the snippets, rotates, looks a user up, deletes',
    async () => {
      await signUp(page, origin, 'pusher');
      const account = await accountOf(page);
      const key = await stack.createKey({ account, kind: 'test', client: 'mobile' });
      keyId = key.id;

      await page.getByRole('link', { name: 'Pusher apps' }).click();
      await page.getByRole('heading', { name: 'Pusher apps' }).waitFor();
      await page.getByText('No apps yet: create one above.').waitFor();
      await page.getByLabel('Bound key').selectOption(key.id);
      await page.getByLabel('User ids').selectOption('any');
      await page.getByLabel('User channel (optional)').fill('private-App.Models.User.{id}');
      await page.getByRole('button', { name: 'Create app' }).click();

      // Shown once, with a copy button that copies it.
      const secret = await secretShown();
      expect(secret).toMatch(/^[0-9a-f]{40}$/);
      expect(await page.getByText('Shown once:').count()).toBe(1);
      await page.getByRole('button', { name: 'Copy secret' }).click();
      await until(async () =>
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret),
      );
      const row = page.getByTestId('pusher-app');
      await until(async () => expect(await row.count()).toBe(1));
      const appId = (await row.getByTestId('pusher-app-id').textContent()) ?? '';
      const appKey = (await row.getByTestId('pusher-app-key').textContent()) ?? '';
      expect(appId).toMatch(/^[0-9]{10}$/);
      expect(appKey).toMatch(/^[0-9a-f]{20}$/);
      const prefix = await keyPrefixOf(page, key.id);
      expect(key.key.startsWith(prefix)).toBe(true);
      expect(await row.getByTestId('pusher-app-bound').textContent()).toBe(
        `Test ${prefix}… (mobile)`,
      );
      expect(await row.getByTestId('pusher-app-user-ids').textContent()).toBe(
        'any id (mapped to a recipient)',
      );
      expect(await row.getByTestId('pusher-app-user-channel').textContent()).toBe(
        'private-App.Models.User.{id}',
      );

      // The secret shown is the one auth hands the edge and ingress, for this account's key.
      const reply = await lookup(appId);
      expect(reply.ok && reply.app).toMatchObject({
        app_id: appId,
        key: appKey,
        secret,
        account_id: account,
        key_id: key.id,
        user_ids: 'any',
        user_channel: 'private-App.Models.User.{id}',
      });

      // The snippets carry the app's key and id, the edge's and ingress's host and port, and
      // the secret while it is on show.
      const snippet = (id: string) => page.getByTestId(`snippet-${id}`).textContent();
      const js = (await snippet('pusher-js')) ?? '';
      expect(js).toContain(`new Pusher('${appKey}', {`);
      expect(js).toContain(`wsHost: '127.0.0.1',\n  wssPort: ${stack.ports['socket-edge']},`);
      const userId = ['$', '{userId}'].join('');
      expect(js).toContain(`pusher.subscribe(\`private-App.Models.User.${userId}\`)`);
      expect(js).not.toContain(secret);
      const node = (await snippet('pusher-node')) ?? '';
      expect(node).toContain(`appId: '${appId}',\n  key: '${appKey}',\n  secret: '${secret}',`);
      expect(node).toContain(`port: '${stack.ports['ingress-api']}',`);
      expect(await snippet('laravel')).toContain(
        `PUSHER_APP_ID=${appId}\nPUSHER_APP_KEY=${appKey}`,
      );
      expect(await snippet('echo')).toContain(`key: '${appKey}',`);
      await shot('created');

      // Saved: the secret leaves the page, the snippets say where it goes.
      await page.getByRole('button', { name: 'I have saved it' }).click();
      expect(await page.getByTestId('pusher-secret').count()).toBe(0);
      expect(await snippet('pusher-node')).toContain("secret: 'YOUR_APP_SECRET',");
      await page.reload();
      await until(async () => expect(await row.count()).toBe(1));
      expect(await page.content()).not.toContain(secret);

      // A new secret, shown once, is the one auth now gives out.
      await row.getByRole('button', { name: 'Rotate secret' }).click();
      await until(async () => expect(await secretShown()).toMatch(/^[0-9a-f]{40}$/));
      const rotated = await secretShown();
      expect(rotated).not.toBe(secret);
      expect(await snippet('pusher-node')).toContain(`secret: '${rotated}',`);
      await until(async () => {
        const r = await lookup(appId);
        expect(r.ok && r.app.secret).toBe(rotated);
      });
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await shot('rotated');

      // The delivery page maps a Pusher user id of the app to its recipient, and finds its events.
      await page.getByRole('link', { name: 'Delivery status' }).click();
      // Within the page navigated to: until it renders, the Pusher page's region and form also
      // match 'Pusher app' (CI once failed there on a strict-mode violation).
      const delivery = page.getByRole('region', { name: 'Delivery status' });
      await delivery.getByLabel('Pusher app').selectOption(appId);
      await delivery.getByLabel('Pusher user id').fill('42');
      await page.getByRole('button', { name: 'Look up user' }).click();
      // In "any" mode every id maps to a recipient.
      const expected = pusherRecipient(appId, '42', 'any') ?? '';
      expect(expected).toMatch(/^[0-9a-f-]{36}$/);
      await until(async () =>
        expect(await page.getByTestId('pusher-user-recipient').textContent()).toBe(expected),
      );
      // An event to that recipient (as the app's sendToUser to user 42 will be) is found by it.
      const event = await notifyWithCurl(stack, {
        recipient: expected,
        payload: { event: 'order-shipped', channel: '#server-to-user-42', data: '{}' },
        api_key: key.key,
      });
      await page.getByRole('button', { name: 'Show its events' }).click();
      expect(await page.getByLabel('Recipient').inputValue()).toBe(expected);
      await until(async () => {
        await page.getByRole('button', { name: 'Find' }).click();
        const rows = page.getByTestId('event-row');
        expect(await rows.count()).toBe(1);
        expect(await rows.first().textContent()).toContain(event.id);
      });
      await shot('user-lookup');

      // Deleted: gone from the list, and auth no longer knows it.
      await page.getByRole('link', { name: 'Pusher apps' }).click();
      await row.getByRole('button', { name: 'Delete' }).click();
      await until(async () =>
        expect(await page.getByText('No apps yet: create one above.').count()).toBe(1),
      );
      const gone = await lookup(appId);
      expect(gone.ok).toBe(false);
    },
    UI_TIMEOUT,
  );

  it(
    'an app of UUID user ids refuses a user id that is not one, naming the field',
    async () => {
      await page.getByRole('link', { name: 'Pusher apps' }).click();
      await page
        .getByRole('region', { name: 'Pusher apps' })
        .getByLabel('Bound key')
        .selectOption(keyId);
      await page.getByRole('button', { name: 'Create app' }).click();
      await until(async () => expect(await secretShown()).toMatch(/^[0-9a-f]{40}$/));
      await page.getByRole('button', { name: 'I have saved it' }).click();

      await page.getByRole('link', { name: 'Delivery status' }).click();
      await page
        .getByRole('region', { name: 'Delivery status' })
        .getByLabel('Pusher user id')
        .fill('42');
      await page.getByRole('button', { name: 'Look up user' }).click();
      await until(async () =>
        expect(
          await page.getByRole('alert').filter({ hasText: 'Pusher user id' }).textContent(),
        ).toMatch(/^Pusher user id: /),
      );
      const user = randomUUID();
      await page.getByLabel('Pusher user id').fill(user);
      await page.getByRole('button', { name: 'Look up user' }).click();
      await until(async () =>
        expect(await page.getByTestId('pusher-user-recipient').textContent()).toBe(user),
      );
    },
    UI_TIMEOUT,
  );
});

/** The key's prefix as the dashboard lists it (`GET /v1/dashboard/keys`). */
async function keyPrefixOf(page: Page, keyId: string): Promise<string> {
  return page.evaluate(async (id) => {
    const r = await fetch('/v1/dashboard/keys', { credentials: 'same-origin' });
    const keys = ((await r.json()) as { keys: Array<{ id: string; key_prefix: string }> }).keys;
    return keys.find((k) => k.id === id)?.key_prefix ?? '';
  }, keyId);
}
