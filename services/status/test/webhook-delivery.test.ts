import { randomBytes } from 'node:crypto';
import { subjects, WEBHOOK_API_SUBJECT, WebhookBody } from '@herald/proto';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type InboxFixture, request, startInboxFixture, uuid } from './support.js';
import { Receiver, verified } from './webhook-receiver.js';

const SCHEDULE = [200, 200, 200, 200, 200];

let rx: Receiver;
let f: InboxFixture;
let auth: NatsConnection;
let ingress: NatsConnection;
let edge: NatsConnection;
beforeAll(async () => {
  rx = await Receiver.start();
  f = await startInboxFixture({
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CA_FILE: rx.caFile,
    WEBHOOK_RETRY_SCHEDULE: SCHEDULE.map((ms) => `${ms}ms`).join(','),
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_POLL_MS: '100',
  });
  [auth, ingress, edge] = await Promise.all([
    f.client('auth'),
    f.client('ingress-api'),
    f.client('socket-edge'),
  ]);
});
afterAll(async () => {
  await f?.close();
  await rx?.stop();
});

const ask = (body: Record<string, unknown>) =>
  request(auth, WEBHOOK_API_SUBJECT, { v: 1, ...body });

async function endpoint(account: string, path: string, events?: string[]) {
  const r = await ask({ op: 'create', account_id: account, url: rx.url(path), events });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return { id: r.endpoint.id as string, secret: r.secret as string };
}

/** Publishes status records as ingress and the edges do. */
function publish(account: string, records: Record<string, unknown>[]): void {
  for (const r of records) {
    ingress.publish(
      subjects.status(account),
      JSON.stringify({ v: 1, account_id: account, at: Date.now(), ...r }),
    );
  }
}

const pendingOf = async (id: string) => (await ask({ op: 'get', id })).endpoint.pending as number;

/** Waits until the endpoint's outbox is empty, so every message it got has been sent. */
const drained = (id: string, timeoutMs = 15_000) =>
  eventually(async () => (await pendingOf(id)) === 0, `endpoint ${id} drained`, timeoutMs);

describe('webhook delivery to a real HTTPS receiver', () => {
  it('sends every type once per first transition, signed per Standard Webhooks; a live event answered 200 is delivered too', async () => {
    const account = uuid();
    const path = `/all-${uuid()}`;
    const { id, secret } = await endpoint(account, path);
    const [a, b, c] = [uuid(), uuid(), uuid()];
    const recipient = uuid();
    publish(account, [
      { id: a, key_id: 'key-1', recipient, status: 'sent' },
      { id: b, key_id: 'key-1', recipient, status: 'pending' },
      { id: c, key_id: 'key-1', recipient, status: 'failed', reason: 'unavailable' },
    ]);
    // `a` was answered 200, which ingress does only once a socket proved receipt: it is delivered too.
    await eventually(
      () => rx.ids(path).size === 4,
      'sent and its delivered, queued, failed arrive',
    );
    publish(account, [{ id: b, status: 'delivered', device: 'phone-1' }]);
    // Inbox mode: a kept event read on some device.
    const r = recipient;
    const stored = await request(ingress, subjects.inboxStore(account), {
      v: 1,
      key_id: 'key-1',
      days: 7,
      events: [{ recipient: r, id: a, ts: Date.now(), payload_json: '{"n":1}' }],
    });
    expect(stored.ok).toBe(true);
    const read = await request(edge, subjects.inboxQuery(account), {
      v: 1,
      op: 'read',
      recipient: r,
      ids: [a],
    });
    expect(read.ok).toBe(true);
    await eventually(() => rx.ids(path).size === 6, 'delivered and read arrive');
    // The same records again (a redelivery, an edge acking twice), and a second read: no new transition.
    publish(account, [
      { id: a, key_id: 'key-1', recipient, status: 'sent' },
      { id: b, status: 'delivered', device: 'phone-2' },
    ]);
    await request(edge, subjects.inboxQuery(account), {
      v: 1,
      op: 'read',
      recipient: r,
      all: true,
    });
    const sentinel = uuid();
    publish(account, [{ id: sentinel, key_id: 'key-1', recipient, status: 'sent' }]);
    await eventually(() => rx.ids(path).has(`${sentinel}:event.sent`), 'the sentinel arrives');
    await drained(id);

    const got = rx.at(path).filter((x) => !x.id.startsWith(sentinel));
    expect(got.map((x) => x.id).sort()).toEqual(
      [
        `${a}:event.sent`,
        `${a}:event.delivered`,
        `${a}:event.read`,
        `${b}:event.queued`,
        `${b}:event.delivered`,
        `${c}:event.failed`,
      ].sort(),
    );
    const bodies = new Map(got.map((x) => [x.id, WebhookBody.parse(verified(secret, x))]));
    expect(bodies.get(`${b}:event.delivered`)).toEqual({
      type: 'event.delivered',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        id: b,
        recipient,
        key_id: 'key-1',
        status: 'delivered',
        ts: expect.any(Number),
        device: 'phone-1',
      },
    });
    expect(bodies.get(`${a}:event.sent`)?.data.status).toBe('sent');
    expect(bodies.get(`${b}:event.queued`)?.data.status).toBe('pending');
    expect(bodies.get(`${c}:event.failed`)?.data.status).toBe('failed');
    expect(bodies.get(`${a}:event.read`)?.data).toMatchObject({
      id: a,
      recipient,
      key_id: 'key-1',
      status: 'read',
    });
    for (const body of bodies.values()) {
      expect(new Date(body.timestamp).getTime()).toBe(body.data.ts);
      expect(body.data).not.toHaveProperty('payload');
    }
    // A body that was tampered with, or signed with another secret, is refused by the verifiers.
    const one = got[0] as (typeof got)[number];
    expect(() => verified(secret, { ...one, body: `${one.body} ` })).toThrow();
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(() => verified(other, one)).toThrow();
  });

  it('sends only the types an endpoint subscribes to, to every endpoint of the account, none of another', async () => {
    const account = uuid();
    const [p1, p2, p3] = [`/sub1-${uuid()}`, `/sub2-${uuid()}`, `/sub3-${uuid()}`];
    const e1 = await endpoint(account, p1, ['event.delivered']);
    const e2 = await endpoint(account, p2);
    expect(e2.secret).not.toBe(e1.secret);
    const e3 = await endpoint(uuid(), p3);
    const ev = uuid();
    publish(account, [
      { id: ev, key_id: 'k', recipient: uuid(), status: 'pending' },
      { id: ev, status: 'delivered' },
    ]);
    await eventually(() => rx.ids(p2).size === 2, 'both types reach the catch-all endpoint');
    await drained(e1.id);
    expect([...rx.ids(p1)]).toEqual([`${ev}:event.delivered`]);
    expect(rx.at(p3)).toEqual([]);
    expect((await ask({ op: 'get', id: e3.id })).endpoint.pending).toBe(0);
  });

  it("carries an opted-in key's payload in the bodies of all of its event's transitions", async () => {
    const account = uuid();
    const path = `/payload-${uuid()}`;
    const { secret } = await endpoint(account, path);
    const ev = uuid();
    publish(account, [
      {
        id: ev,
        key_id: 'k',
        recipient: uuid(),
        status: 'pending',
        payload_json: '{"order":42,"text":"héllo"}',
      },
    ]);
    await eventually(() => rx.ids(path).size === 1, 'queued arrives');
    publish(account, [{ id: ev, status: 'delivered' }]);
    await eventually(() => rx.ids(path).size === 2, 'delivered arrives');
    for (const a of rx.at(path)) {
      const body = WebhookBody.parse(verified(secret, a));
      expect(body.data.payload).toEqual({ order: 42, text: 'héllo' });
    }
  });

  it('retries a 500 with the same webhook-id: three 500s then a 200 make 4 arrivals, all recorded', async () => {
    const account = uuid();
    const path = `/flaky-${uuid()}`;
    rx.behave.set(path, (a) => (a.nth <= 3 ? { status: 500 } : { status: 200 }));
    const { id, secret } = await endpoint(account, path, ['event.sent']);
    const ev = uuid();
    publish(account, [{ id: ev, key_id: 'k', recipient: uuid(), status: 'sent' }]);
    await eventually(() => rx.at(path).length === 4, 'four arrivals');
    await drained(id);
    const arrivals = rx.at(path);
    expect(new Set(arrivals.map((a) => a.id))).toEqual(new Set([`${ev}:event.sent`]));
    for (const a of arrivals) verified(secret, a);
    // The same bytes every time; each attempt signs its own timestamp.
    expect(new Set(arrivals.map((a) => a.body)).size).toBe(1);
    const attempts = (await ask({ op: 'attempts', id })).attempts;
    expect(attempts.map((x: { http_status: number }) => x.http_status)).toEqual([
      200, 500, 500, 500,
    ]);
    expect(attempts[0]).toMatchObject({
      message_id: `${ev}:event.sent`,
      type: 'event.sent',
      error: null,
    });
    const view = (await ask({ op: 'get', id })).endpoint;
    expect(view.failing_since).toBeNull();
  });

  it('honours Retry-After (seconds) over the schedule', async () => {
    const path = `/later-${uuid()}`;
    rx.behave.set(path, (a) =>
      a.nth === 1 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 },
    );
    const { id } = await endpoint(uuid(), path);
    const t = await ask({ op: 'test', id });
    expect(t.ok).toBe(true);
    await eventually(() => rx.at(path).length === 2, 'the retry arrives', 15_000);
    const [first, second] = rx.at(path);
    // The schedule says 200 ms ±20 %; the receiver asked for 2 s.
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(2000 - 50);
  });

  it('fails a message for good once the schedule is exhausted; replay sends it again, same id', async () => {
    const account = uuid();
    const path = `/down-${uuid()}`;
    rx.behave.set(path, () => ({ status: 500 }));
    const { id, secret } = await endpoint(account, path, ['event.sent']);
    const since = Date.now();
    const ev = uuid();
    publish(account, [{ id: ev, key_id: 'k', recipient: uuid(), status: 'sent' }]);
    await eventually(() => rx.at(path).length === SCHEDULE.length + 1, 'every attempt');
    await drained(id);
    const msg = await f.db
      .selectFrom('webhook_messages')
      .selectAll()
      .where('endpoint_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(msg.failed_at).not.toBeNull();
    expect(msg.attempts).toBe(SCHEDULE.length + 1);
    expect((await ask({ op: 'get', id })).endpoint.failing_since).not.toBeNull();
    rx.behave.set(path, () => ({ status: 200 }));
    const replay = await ask({ op: 'replay', id, since });
    expect(replay).toEqual({ v: 1, ok: true, queued: 1 });
    await drained(id);
    const last = rx.at(path).at(-1);
    expect(last?.id).toBe(`${ev}:event.sent`);
    expect(WebhookBody.parse(verified(secret, last as NonNullable<typeof last>)).data.id).toBe(ev);
    expect(rx.at(path)).toHaveLength(SCHEDULE.length + 2);
    // A replay from after the transition finds nothing.
    expect((await ask({ op: 'replay', id, since: Date.now() })).queued).toBe(0);
  });

  it('410 Gone disables the endpoint at once; enable sends what waited', async () => {
    const account = uuid();
    const path = `/gone-${uuid()}`;
    rx.behave.set(path, () => ({ status: 410 }));
    const { id } = await endpoint(account, path, ['event.sent']);
    const ev = uuid();
    publish(account, [{ id: ev, key_id: 'k', recipient: uuid(), status: 'sent' }]);
    await eventually(
      async () => (await ask({ op: 'get', id })).endpoint.disabled_at !== null,
      'disabled',
    );
    const view = (await ask({ op: 'get', id })).endpoint;
    expect(view.disabled_reason).toMatch(/410 Gone/);
    expect(view.pending).toBe(1);
    expect(rx.at(path)).toHaveLength(1);
    // Disabled: new transitions are not queued for it.
    publish(account, [{ id: uuid(), key_id: 'k', recipient: uuid(), status: 'sent' }]);
    const sentinel = await endpoint(account, `/gone-sentinel-${uuid()}`, ['event.sent']);
    const s = uuid();
    publish(account, [{ id: s, key_id: 'k', recipient: uuid(), status: 'sent' }]);
    await drained(sentinel.id);
    expect((await ask({ op: 'get', id })).endpoint.pending).toBe(1);
    expect(rx.at(path)).toHaveLength(1);
    rx.behave.set(path, () => ({ status: 200 }));
    await ask({ op: 'enable', id });
    await drained(id);
    expect(rx.at(path).map((a) => a.id)).toEqual([`${ev}:event.sent`, `${ev}:event.sent`]);
  });

  it('signs with both secrets during a rotation overlap, with the new one alone after it', async () => {
    const path = `/rotate-${uuid()}`;
    const { id, secret: old } = await endpoint(uuid(), path);
    const rotated = await ask({ op: 'rotate-secret', id });
    const fresh = rotated.secret as string;
    await ask({ op: 'test', id });
    await eventually(() => rx.at(path).length === 1, 'the test event arrives');
    const during = rx.at(path)[0] as NonNullable<ReturnType<typeof rx.at>[number]>;
    expect(during.signature.split(' ')).toHaveLength(2);
    expect(during.signature).toMatch(/^v1,\S+ v1,\S+$/);
    verified(old, during);
    verified(fresh, during);
    // The overlap is over: only the new secret signs.
    await f.db
      .updateTable('webhook_endpoints')
      .set({ previous_until: new Date(Date.now() - 1000) })
      .where('id', '=', id)
      .execute();
    await ask({ op: 'test', id });
    await eventually(() => rx.at(path).length === 2, 'the second test event arrives');
    const after = rx.at(path)[1] as NonNullable<ReturnType<typeof rx.at>[number]>;
    expect(after.signature.split(' ')).toHaveLength(1);
    verified(fresh, after);
    expect(() => verified(old, after)).toThrow();
  });
});
