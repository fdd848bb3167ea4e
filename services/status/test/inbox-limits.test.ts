import { subjects } from '@herald/proto';
import { sql } from 'kysely';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type InboxFixture, request, startInboxFixture, uuid } from './support.js';

const CAP = 5;
const DAY_MS = 24 * 3600_000;

let f: InboxFixture;
let ingress: NatsConnection;
let retention: NatsConnection;
beforeAll(async () => {
  f = await startInboxFixture({ INBOX_MAX_PER_RECIPIENT: String(CAP) });
  ingress = await f.client('ingress-api');
  retention = await f.client('retention');
});
afterAll(async () => {
  await f?.close();
});

const event = (recipient: string, id: string, ts = f.clock.now) => ({
  recipient,
  id,
  ts,
  payload_json: `{"id":"${id}"}`,
});
const store = (account: string, events: unknown[], days = 7) =>
  request(ingress, subjects.inboxStore(account), { v: 1, key_id: 'k1', days, events });
const query = (account: string, q: Record<string, unknown>) =>
  request(ingress, subjects.inboxQuery(account), { v: 1, ...q });
const ids = async (account: string, recipient: string) =>
  (await query(account, { op: 'history', recipient, before: null, limit: 100 })).events.map(
    (e: { id: string }) => e.id,
  );
const expire = () => request(retention, subjects.inboxExpire, { v: 1 });
/** A status record as ingress or an edge publishes it. */
const status = (account: string, id: string, s: 'sent' | 'pending' | 'delivered' | 'failed') =>
  ingress.publish(
    subjects.status(account),
    JSON.stringify({ v: 1, id, account_id: account, status: s, at: Date.now() }),
  );
const settled = async (id: string) =>
  (
    await sql<{ delivered: boolean }>`select delivered from inbox_events where id = ${id}`.execute(
      f.db,
    )
  ).rows[0]?.delivered === true;

describe('the inbox cap (INBOX_MAX_PER_RECIPIENT)', () => {
  it('keeps exactly the cap; past it refuses an unread inbox with inbox_full and drops nothing', async () => {
    const account = uuid();
    const r = uuid();
    const five = await store(
      account,
      Array.from({ length: CAP }, (_, i) => event(r, `e${i}`)),
    );
    expect(five.results.every((x: { seq?: number }) => typeof x.seq === 'number')).toBe(true);
    const sixth = await store(account, [event(r, 'e5')]);
    expect(sixth.results[0]).toMatchObject({ error: { code: 'inbox_full', field: 'recipient' } });
    expect(await ids(account, r)).toEqual(['e4', 'e3', 'e2', 'e1', 'e0']);
    // A retry of a kept event is no new event: it still answers its sequence at the cap.
    expect((await store(account, [event(r, 'e0')])).results[0]).toEqual({
      seq: five.results[0].seq,
    });
    // Another recipient's inbox is its own.
    expect((await store(account, [event(uuid(), 'e5')])).results[0].seq).toBeGreaterThan(0);
  });

  it('past the cap removes the oldest read events first, and only as many as it needs', async () => {
    const account = uuid();
    const r = uuid();
    await store(
      account,
      Array.from({ length: CAP }, (_, i) => event(r, `e${i}`)),
    );
    await query(account, { op: 'read', recipient: r, ids: ['e3', 'e1'] });
    // Three new events in one request: two take the read ones' places (e1 first, then e3), the
    // third finds no read event left and is refused.
    const more = await store(account, [event(r, 'n0'), event(r, 'n1'), event(r, 'n2')]);
    expect(more.results[0].seq).toBeGreaterThan(0);
    expect(more.results[1].seq).toBeGreaterThan(0);
    expect(more.results[2]).toMatchObject({ error: { code: 'inbox_full' } });
    expect(await ids(account, r)).toEqual(['n1', 'n0', 'e4', 'e2', 'e0']);
    expect((await query(account, { op: 'unread', recipient: r })).unread).toBe(CAP);
  });

  it('holds the cap under concurrent stores to one recipient', async () => {
    const account = uuid();
    const r = uuid();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store(account, [event(r, `c${i}`)])),
    );
    const kept = answers.filter((a) => a.results[0].seq).length;
    const full = answers.filter((a) => a.results[0].error?.code === 'inbox_full').length;
    expect([kept, full]).toEqual([CAP, 20 - CAP]);
    expect((await ids(account, r)).length).toBe(CAP);
  });
});

describe('inbox expiry (retention via rt.inboxapi.expire)', () => {
  it('removes expired events once settled, never one not yet delivered', async () => {
    const account = uuid();
    const r = uuid();
    const old = f.clock.now - 3 * DAY_MS;
    // Kept one day, three days ago: all past their expiry.
    await store(
      account,
      [
        event(r, 'sent', old),
        event(r, 'delivered', old),
        event(r, 'failed', old),
        event(r, 'pending', old),
      ],
      1,
    );
    await store(account, [event(r, 'fresh')], 7);
    status(account, 'sent', 'sent');
    status(account, 'delivered', 'delivered');
    status(account, 'failed', 'failed');
    status(account, 'pending', 'pending');
    status(account, 'fresh', 'sent');
    await eventually(
      async () =>
        (await settled('sent')) &&
        (await settled('delivered')) &&
        (await settled('failed')) &&
        (await settled('fresh')),
      'the status writer settled the inbox rows',
    );
    expect(await settled('pending')).toBe(false);
    const notices: number[] = [];
    const edge = await f.client('socket-edge');
    const sub = edge.subscribe(subjects.inboxUnread(account, r), {
      callback: (_e, m) => notices.push(JSON.parse(new TextDecoder().decode(m.data)).unread),
    });
    await edge.flush();
    const first = await expire();
    expect(first).toMatchObject({ v: 1, ok: true });
    expect(first.removed).toBe(3);
    // Not delivered (only its `pending` record came) or not expired (fresh): still kept.
    expect(await ids(account, r)).toEqual(['fresh', 'pending']);
    await eventually(() => notices.at(-1) === 2, 'expiry published the new unread count');
    sub.unsubscribe();
    // Once delivered, the next run removes it.
    status(account, 'pending', 'delivered');
    await eventually(() => settled('pending'), 'the late delivery settled its row');
    await expire();
    expect(await ids(account, r)).toEqual(['fresh']);
  });

  it('refuses an expire request that is not {"v":1}', async () => {
    expect(await request(retention, subjects.inboxExpire, { v: 2 })).toMatchObject({
      ok: false,
      error: { code: 'invalid_field' },
    });
  });
});
