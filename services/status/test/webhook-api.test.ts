import { randomBytes } from 'node:crypto';
import { SecretBox } from '@herald/kit';
import { subjects, WEBHOOK_API_SUBJECT, WEBHOOK_EVENT_TYPES } from '@herald/proto';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealContext } from '../src/webhooks/secrets.js';
import { eventually, type InboxFixture, request, startInboxFixture, uuid } from './support.js';

const KEY = randomBytes(32);
// A public address as a literal: create needs no DNS for it, and nothing is sent in these tests.
const PUBLIC_URL = 'https://93.184.215.14/hooks';

let f: InboxFixture;
let auth: NatsConnection;
let ingress: NatsConnection;
/** Nothing is sent here (WEBHOOK_CONCURRENCY=0), so queues only fill. */
const QUEUE_MAX = 3;
beforeAll(async () => {
  f = await startInboxFixture({
    WEBHOOK_SECRET_KEY: KEY.toString('base64'),
    WEBHOOK_CONCURRENCY: '0',
    WEBHOOK_ENDPOINT_QUEUE_MAX: String(QUEUE_MAX),
  });
  auth = await f.client('auth');
  ingress = await f.client('ingress-api');
});
afterAll(async () => {
  await f?.close();
});

const ask = (body: Record<string, unknown>) =>
  request(auth, WEBHOOK_API_SUBJECT, { v: 1, ...body });
const create = (account: string, extra: Record<string, unknown> = {}) =>
  ask({ op: 'create', account_id: account, url: PUBLIC_URL, ...extra });

describe('rt.webhookapi.request: endpoints', () => {
  it('create answers the secret once (whsec_ + base64 of 32 bytes), stores it sealed, every type by default', async () => {
    const account = uuid();
    const r = await create(account);
    expect(r.ok).toBe(true);
    expect(r.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(r.secret.slice(6), 'base64')).toHaveLength(32);
    expect(r.endpoint).toMatchObject({
      account_id: account,
      url: PUBLIC_URL,
      events: [...WEBHOOK_EVENT_TYPES],
      disabled_at: null,
      disabled_reason: null,
      failing_since: null,
      pending: 0,
    });
    expect(JSON.stringify(r.endpoint)).not.toContain('whsec_');
    const row = await f.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', r.endpoint.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_sealed).not.toContain(r.secret.slice(6, 20));
    expect(new SecretBox(KEY).open(row.secret_sealed, sealContext(row.id))).toBe(r.secret);
    // get and list never show it again.
    const got = await ask({ op: 'get', id: r.endpoint.id });
    expect(got).toEqual({ v: 1, ok: true, endpoint: r.endpoint });
    const listed = await ask({ op: 'list', account_id: account });
    expect(listed).toEqual({ v: 1, ok: true, endpoints: [r.endpoint] });
  });

  it('keeps the events asked for, deduplicated; a bad type names the field', async () => {
    const r = await create(uuid(), { events: ['event.read', 'event.failed', 'event.read'] });
    expect(r.endpoint.events).toEqual(['event.read', 'event.failed']);
    const bad = await create(uuid(), { events: ['event.opened'] });
    expect(bad.ok).toBe(false);
    expect(bad.error.code).toBe('invalid_field');
    expect(bad.error.field).toBe('events.0');
    expect(bad.error.message).toMatch(/event\.sent, event\.queued/);
  });

  it("scopes every operation by account_id: another account's endpoint is not_found", async () => {
    const mine = (await create(uuid())).endpoint;
    const other = uuid();
    for (const op of ['get', 'delete', 'rotate-secret', 'enable', 'attempts', 'test']) {
      const r = await ask({ op, id: mine.id, account_id: other });
      expect(r, op).toMatchObject({ ok: false, error: { code: 'not_found', field: 'id' } });
    }
    expect((await ask({ op: 'replay', id: mine.id, account_id: other, since: 0 })).error.code).toBe(
      'not_found',
    );
    expect(await ask({ op: 'list', account_id: other })).toEqual({ v: 1, ok: true, endpoints: [] });
    // Still there, for its own account.
    expect((await ask({ op: 'get', id: mine.id, account_id: mine.account_id })).ok).toBe(true);
  });

  it('rotate-secret answers a new secret and keeps the old one signing for WEBHOOK_SECRET_OVERLAP_MS', async () => {
    const first = await create(uuid());
    const id = first.endpoint.id;
    const r = await ask({ op: 'rotate-secret', id, account_id: first.endpoint.account_id });
    expect(r.ok).toBe(true);
    expect(r.secret).toMatch(/^whsec_/);
    expect(r.secret).not.toBe(first.secret);
    const row = await f.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const box = new SecretBox(KEY);
    expect(box.open(row.secret_sealed, sealContext(id))).toBe(r.secret);
    expect(box.open(row.previous_secret_sealed as string, sealContext(id))).toBe(first.secret);
    expect(row.previous_until?.getTime()).toBe(f.clock.now + 24 * 3600_000);
  });

  it('enable clears a disabled endpoint; delete answers it as it was, then it is gone', async () => {
    const { endpoint } = await create(uuid());
    await f.db
      .updateTable('webhook_endpoints')
      .set({ disabled_at: new Date(), disabled_reason: 'gone (410)', failing_since: new Date() })
      .where('id', '=', endpoint.id)
      .execute();
    const disabled = await ask({ op: 'get', id: endpoint.id });
    expect(disabled.endpoint.disabled_reason).toBe('gone (410)');
    const test = await ask({ op: 'test', id: endpoint.id });
    expect(test.error).toMatchObject({ code: 'invalid_field', field: 'id' });
    expect(test.error.message).toMatch(/disabled \(gone \(410\)\): enable it first/);
    const enabled = await ask({ op: 'enable', id: endpoint.id });
    expect(enabled).toEqual({ v: 1, ok: true, endpoint });
    const deleted = await ask({ op: 'delete', id: endpoint.id });
    expect(deleted).toEqual({ v: 1, ok: true, endpoint });
    expect((await ask({ op: 'get', id: endpoint.id })).error.code).toBe('not_found');
  });

  it('test queues one webhook.test message; attempts lists none yet; replay of nothing queues 0', async () => {
    const { endpoint } = await create(uuid());
    const t = await ask({ op: 'test', id: endpoint.id });
    expect(t).toMatchObject({ v: 1, ok: true, queued: 1 });
    expect(t.message_id).toMatch(/^test:[0-9a-f-]{36}$/);
    expect((await ask({ op: 'get', id: endpoint.id })).endpoint.pending).toBe(1);
    const msg = await f.db
      .selectFrom('webhook_messages')
      .selectAll()
      .where('endpoint_id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    expect(msg.msg_id).toBe(t.message_id);
    expect(JSON.parse(msg.body)).toEqual({
      type: 'webhook.test',
      timestamp: new Date(f.clock.now).toISOString(),
      data: { id: t.message_id, recipient: null, key_id: null, status: 'test', ts: f.clock.now },
    });
    expect(await ask({ op: 'attempts', id: endpoint.id })).toEqual({
      v: 1,
      ok: true,
      attempts: [],
    });
    expect(await ask({ op: 'replay', id: endpoint.id, since: 0 })).toEqual({
      v: 1,
      ok: true,
      queued: 0,
    });
  });

  it('refuses a request that is not one, naming the field', async () => {
    expect((await ask({ op: 'explode' })).error.code).toBe('invalid_field');
    const r = await ask({ op: 'attempts', id: 'x', limit: 101 });
    expect(r.error).toMatchObject({ code: 'invalid_field', field: 'limit' });
  });
});

describe('WEBHOOK_ENDPOINT_QUEUE_MAX', () => {
  it('queues up to the bound per endpoint; past it a message is dropped and counted', async () => {
    const account = uuid();
    const { endpoint } = await create(account);
    const other = (await create(account, { events: ['event.sent'] })).endpoint;
    const dropped = async () =>
      (await f.service.registry.getSingleMetric('herald_webhook_dropped_total')?.get())?.values[0]
        ?.value ?? 0;
    const before = await dropped();
    // Four first transitions: `endpoint` takes 3 of its 4 messages, `other` its only one (sent).
    const ev = uuid();
    for (const status of ['sent', 'pending', 'delivered', 'failed']) {
      ingress.publish(
        subjects.status(account),
        JSON.stringify({
          v: 1,
          id: ev,
          account_id: account,
          key_id: 'k',
          recipient: uuid(),
          status,
          at: Date.now(),
        }),
      );
    }
    await eventually(
      async () => (await ask({ op: 'get', id: other.id })).endpoint.pending === 1,
      'the other endpoint has its message',
    );
    expect((await ask({ op: 'get', id: endpoint.id })).endpoint.pending).toBe(QUEUE_MAX);
    expect((await dropped()) - before).toBe(1);
    // At the bound, "send a test event" says so.
    const t = await ask({ op: 'test', id: endpoint.id });
    expect(t.error.code).toBe('queue_full');
    expect(t.error.message).toMatch(/WEBHOOK_ENDPOINT_QUEUE_MAX/);
    // One below it, one more fits.
    await f.db
      .deleteFrom('webhook_messages')
      .where('endpoint_id', '=', endpoint.id)
      .where('msg_id', '=', `${ev}:event.sent`)
      .execute();
    await f.db
      .updateTable('webhook_endpoints')
      .set({ pending: QUEUE_MAX - 1 })
      .where('id', '=', endpoint.id)
      .execute();
    expect((await ask({ op: 'test', id: endpoint.id })).queued).toBe(1);
    expect((await ask({ op: 'get', id: endpoint.id })).endpoint.pending).toBe(QUEUE_MAX);
  });
});

describe('rt.webhookapi.request: the URL rule at create', () => {
  it.each([
    ['https://127.0.0.1/h', /127\.0\.0\.1 is a loopback address/],
    ['https://10.0.0.1/h', /10\.0\.0\.1 is a private address/],
    ['https://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is a linkLocal address/],
    ['https://[::1]/h', /::1 is a loopback address/],
    ['https://[::ffff:127.0.0.1]/h', /loopback address/],
    ['https://[fd00:ec2::254]/h', /uniqueLocal address/],
    ['https://0.0.0.0/h', /unspecified address/],
    ['https://localhost:8443/h', /localhost resolves to (127\.0\.0\.1|::1), a loopback address/],
    ['http://93.184.215.14/h', /must be an https:\/\/ URL/],
    ['https://user:pw@93.184.215.14/h', /must not carry credentials/],
    ['not a url', /must be an absolute URL/],
  ])('%s is refused with an error naming url', async (url, message) => {
    const r = await create(uuid(), { url });
    expect(r.ok).toBe(false);
    expect(r.error.code).toBe('invalid_field');
    expect(r.error.field).toBe('url');
    expect(r.error.message).toMatch(/^url: /);
    expect(r.error.message).toMatch(message);
  });
});

describe('rt.webhookapi.request without WEBHOOK_SECRET_KEY', () => {
  let g: InboxFixture;
  let nc: NatsConnection;
  beforeAll(async () => {
    g = await startInboxFixture({ WEBHOOK_CONCURRENCY: '0' });
    nc = await g.client('auth');
  });
  afterAll(async () => {
    await g?.close();
  });

  it('create and rotate-secret answer an error naming WEBHOOK_SECRET_KEY; the rest works', async () => {
    const account = uuid();
    const r = await request(nc, WEBHOOK_API_SUBJECT, {
      v: 1,
      op: 'create',
      account_id: account,
      url: PUBLIC_URL,
    });
    expect(r.ok).toBe(false);
    expect(r.error.code).toBe('unavailable');
    expect(r.error.message).toMatch(/WEBHOOK_SECRET_KEY/);
    expect(
      await request(nc, WEBHOOK_API_SUBJECT, { v: 1, op: 'list', account_id: account }),
    ).toEqual({ v: 1, ok: true, endpoints: [] });
    await g.db
      .insertInto('webhook_endpoints')
      .values({
        id: 'ep-1',
        account_id: account,
        url: PUBLIC_URL,
        events: ['event.sent'],
        secret_sealed: 'v1.x.y.z',
        previous_secret_sealed: null,
        previous_until: null,
        disabled_at: null,
        disabled_reason: null,
        failing_since: null,
      })
      .execute();
    const rot = await request(nc, WEBHOOK_API_SUBJECT, { v: 1, op: 'rotate-secret', id: 'ep-1' });
    expect(rot.error.message).toMatch(/WEBHOOK_SECRET_KEY/);
    const got = await request(nc, WEBHOOK_API_SUBJECT, { v: 1, op: 'get', id: 'ep-1' });
    expect(got.endpoint.id).toBe('ep-1');
  });
});
