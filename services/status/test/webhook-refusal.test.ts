import { randomBytes } from 'node:crypto';
import type { ResolvedAddress } from '@herald/outbound';
import { systemResolver } from '@herald/outbound';
import { WEBHOOK_API_SUBJECT } from '@herald/proto';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type InboxFixture, request, startInboxFixture, uuid } from './support.js';
import { Receiver } from './webhook-receiver.js';

/*
 * WEBHOOK_ALLOW_PRIVATE unset: the address rule holds at send time too, after DNS, on every
 * attempt. A name's answers are set by the test (a resolver the service is built with; every
 * other name goes to the system's), so a name can resolve to a public address when the endpoint
 * is created and to loopback when a message is sent (DNS rebinding).
 */
const answers = new Map<string, ResolvedAddress[]>();
const resolver = async (host: string) => answers.get(host) ?? systemResolver(host);
const PUBLIC: ResolvedAddress[] = [{ address: '93.184.215.14', family: 4 }];

let rx: Receiver;
let f: InboxFixture;
let auth: NatsConnection;
beforeAll(async () => {
  rx = await Receiver.start();
  f = await startInboxFixture(
    {
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_CA_FILE: rx.caFile,
      WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 30 }, () => '200ms').join(','),
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_DISABLE_AFTER_MS: '1000',
    },
    { resolver },
  );
  auth = await f.client('auth');
});
afterAll(async () => {
  await f?.close();
  await rx?.stop();
});

const ask = (body: Record<string, unknown>) =>
  request(auth, WEBHOOK_API_SUBJECT, { v: 1, ...body });

/** An endpoint created at a public URL, then pointed at `url` behind the create check's back. */
async function endpointAt(url: string): Promise<string> {
  const r = await ask({ op: 'create', account_id: uuid(), url: 'https://93.184.215.14/x' });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  await f.db
    .updateTable('webhook_endpoints')
    .set({ url })
    .where('id', '=', r.endpoint.id)
    .execute();
  return r.endpoint.id;
}

const firstAttempt = async (id: string) => {
  let attempt: Record<string, unknown> | undefined;
  await eventually(async () => {
    attempt = (await ask({ op: 'attempts', id })).attempts[0];
    return attempt !== undefined;
  }, `an attempt of ${id}`);
  return attempt as Record<string, unknown>;
};

describe('the address rule at send time', () => {
  it.each([
    [
      '127.0.0.1',
      (port: number) => `https://127.0.0.1:${port}/h`,
      /127\.0\.0\.1 is a loopback address/,
    ],
    ['[::1]', (port: number) => `https://[::1]:${port}/h`, /::1 is a loopback address/],
    [
      'localhost',
      (port: number) => `https://localhost:${port}/h`,
      /localhost resolves to (127\.0\.0\.1|::1), a loopback address/,
    ],
    ['10.0.0.1', () => 'https://10.0.0.1/h', /10\.0\.0\.1 is a private address/],
    ['169.254.169.254', () => 'https://169.254.169.254/latest/meta-data', /linkLocal address/],
  ])('refuses %s: recorded as an error, nothing reaches it', async (_name, url, message) => {
    const target = url(Number(new URL(rx.url('/')).port));
    const id = await endpointAt(target);
    await ask({ op: 'test', id });
    const attempt = await firstAttempt(id);
    expect(attempt).toMatchObject({ http_status: null, type: 'webhook.test' });
    expect(attempt.error).toMatch(message);
    expect(rx.at('/h')).toEqual([]);
  });

  it('checks every attempt after DNS: a name that resolved to a public address at create is refused once it resolves to loopback', async () => {
    const port = Number(new URL(rx.url('/')).port);
    const name = `rebind-${uuid().slice(0, 8)}.test`;
    answers.set(name, PUBLIC);
    const r = await ask({
      op: 'create',
      account_id: uuid(),
      url: `https://${name}:${port}/rebind`,
    });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    answers.set(name, [{ address: '127.0.0.1', family: 4 }]);
    await ask({ op: 'test', id: r.endpoint.id });
    const attempt = await firstAttempt(r.endpoint.id);
    expect(attempt.error).toMatch(
      new RegExp(`${name} resolves to 127\\.0\\.0\\.1, a loopback address`),
    );
    expect(rx.at('/rebind')).toEqual([]);
    // A name with one private address among public ones is refused whole.
    answers.set(name, [...PUBLIC, { address: '::ffff:10.0.0.1', family: 6 }]);
    const again = await ask({ op: 'create', account_id: uuid(), url: `https://${name}/x` });
    expect(again.error).toMatchObject({ code: 'invalid_field', field: 'url' });
    expect(again.error.message).toMatch(/::ffff:10\.0\.0\.1, a private address/);
  });

  it('disables an endpoint failing without a success for WEBHOOK_DISABLE_AFTER_MS, saying why', async () => {
    const id = await endpointAt('https://10.0.0.1/h');
    await ask({ op: 'test', id });
    await eventually(
      async () => (await ask({ op: 'get', id })).endpoint.disabled_at !== null,
      'disabled after failing for a second',
    );
    const view = (await ask({ op: 'get', id })).endpoint;
    expect(view.disabled_reason).toMatch(
      /failing without a success since .* \(WEBHOOK_DISABLE_AFTER_MS\)/,
    );
    expect(view.failing_since).not.toBeNull();
    const attempts = (await ask({ op: 'attempts', id })).attempts;
    // It failed for at least the bound before it was disabled.
    const first = new Date(attempts.at(-1).at).getTime();
    expect(new Date(view.disabled_at).getTime() - first).toBeGreaterThanOrEqual(1000);
  });
});
