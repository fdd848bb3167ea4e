import { openSocket, type Stack } from '@herald/testkit';
import type { Page } from 'playwright-core';
import { accountOf, notifyWithCurl, signUp, until } from './support.js';

/** Every page of the dashboard: its hash and the heading it shows. */
export const PAGES = [
  ['keys', 'API keys'],
  ['plan', 'Plan'],
  ['delivery', 'Delivery status'],
  ['webhooks', 'Webhooks'],
  ['push', 'Push'],
  ['pusher', 'Pusher apps'],
  ['debug', 'Debug console'],
] as const;

/**
 * An account with something on every page, as a new user makes it: signed up, a named Test key,
 * an event delivered live and one queued then delivered, a request refused for a bad field, a paid
 * plan and a named Live key. The screenshots script and the narrow-screen test walk the pages of
 * this account.
 */
export async function furnishAccount(page: Page, stack: Stack, origin: string): Promise<void> {
  await signUp(page, origin, 'tour');
  await page.getByLabel('Name').fill('trying Herald');
  await page.getByRole('button', { name: 'Generate the Test key' }).click();
  const testKey = (await page.getByTestId('new-key').textContent()) ?? '';
  await page.getByRole('button', { name: 'I have saved it' }).click();
  const to = crypto.randomUUID();
  await notifyWithCurl(stack, { recipient: to, payload: { hello: 'queued' }, api_key: testKey });
  const sock = openSocket(stack.wsUrl, stack.ca, { apiKey: testKey, recipient: to, v1: true });
  await sock.opened;
  await sock.waitForFrames(1);
  await notifyWithCurl(stack, { recipient: to, payload: { hello: 'live' }, api_key: testKey });
  await sock.close();
  // Refused (400, the recipient field) with a key ingress can name: the Delivery page's refusals.
  await notifyWithCurl(stack, { recipient: 'not-a-uuid', payload: {}, api_key: testKey });
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
  await form.getByLabel('Scope').selectOption('dispatch');
  await form.getByRole('button', { name: 'Create a Live key' }).click();
  await page.getByRole('button', { name: 'I have saved it' }).click();
}

/** Opens one page of the dashboard at `width` and waits until it has drawn its data. */
export async function visit(
  page: Page,
  origin: string,
  hash: string,
  heading: string,
  width: number,
): Promise<void> {
  await page.setViewportSize({ width, height: 900 });
  await page.goto(`${origin}/#${hash}`);
  await page.reload();
  await page.getByRole('heading', { name: heading, exact: true }).first().waitFor();
  await page.waitForLoadState('networkidle');
  // The Keys page's list of Live keys (the tour makes one) is drawn once its fetch answered.
  if (hash === 'keys') await page.getByRole('table', { name: 'Live keys' }).waitFor();
  // The Delivery page lists refusals for one key: the tour's Test key, once its refusal has
  // reached the page (ingress sends refusals every REFUSAL_FLUSH_MS).
  if (hash === 'delivery') {
    const picker = page.locator('section .card.inline select').first();
    const testKey = picker.locator('option', { hasText: 'Test' });
    await testKey.waitFor({ state: 'attached' });
    await picker.selectOption((await testKey.getAttribute('value')) ?? '');
    await page.getByTestId('refusal-row').first().waitFor({ timeout: 30_000 });
  }
  await until(async () => {
    const loading = await page.getByText('…', { exact: true }).count();
    if (loading > 0) throw new Error('still loading');
  });
}
