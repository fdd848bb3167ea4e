import { subjects } from '@herald/proto';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type InboxFixture, request, startInboxFixture, uuid } from './support.js';

let f: InboxFixture;
let ingress: NatsConnection;
let edge: NatsConnection;
beforeAll(async () => {
  f = await startInboxFixture();
  ingress = await f.client('ingress-api');
  edge = await f.client('socket-edge');
});
afterAll(async () => {
  await f?.close();
});

const event = (recipient: string, n: number, id = uuid()) => ({
  recipient,
  id,
  ts: f.clock.now,
  payload_json: `{"n":${n},"text":"héllo"}`,
});
const store = (account: string, events: unknown[], days = 7) =>
  request(ingress, subjects.inboxStore(account), { v: 1, key_id: 'k1', days, events });
const query = (nc: NatsConnection, account: string, q: Record<string, unknown>) =>
  request(nc, subjects.inboxQuery(account), { v: 1, ...q });

describe('the inbox store over NATS', () => {
  it('keeps events once (a retry answers the first sequence), counts unread, pages newest first', async () => {
    const account = uuid();
    const r = uuid();
    const first = await store(account, [event(r, 1, 'ev-1'), event(r, 2, 'ev-2')]);
    expect(first.ok).toBe(true);
    const [a, b] = first.results;
    expect(b.seq).toBeGreaterThan(a.seq);
    const retry = await store(account, [event(r, 1, 'ev-1')]);
    expect(retry.results).toEqual([{ seq: a.seq }]);
    expect(await query(edge, account, { op: 'unread', recipient: r })).toEqual({
      v: 1,
      ok: true,
      unread: 2,
    });
    const page = await query(edge, account, {
      op: 'history',
      recipient: r,
      before: null,
      limit: 10,
    });
    expect(page).toEqual({
      v: 1,
      ok: true,
      events: [
        { id: 'ev-2', ts: f.clock.now, payload: { n: 2, text: 'héllo' }, read: false },
        { id: 'ev-1', ts: f.clock.now, payload: { n: 1, text: 'héllo' }, read: false },
      ],
      next: null,
    });
  });

  it('batches many concurrent stores, each answered with its own sequence', async () => {
    const account = uuid();
    const recipients = Array.from({ length: 8 }, uuid);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        store(account, [event(recipients[i % 8] as string, i)]),
      ),
    );
    const seqs = answers.map((x) => x.results[0].seq);
    expect(new Set(seqs).size).toBe(200);
    for (const r of recipients) {
      expect((await query(edge, account, { op: 'unread', recipient: r })).unread).toBe(25);
    }
  });

  it('pages by cursor while events arrive: no event twice, none missed, new ones on a fresh page', async () => {
    const account = uuid();
    const r = uuid();
    const ids = Array.from({ length: 25 }, (_, i) => `old-${i}`);
    for (const id of ids) await store(account, [event(r, 0, id)]);
    const seen: string[] = [];
    let before: string | null = null;
    let arrived = 0;
    do {
      const page = await query(edge, account, { op: 'history', recipient: r, before, limit: 10 });
      expect(page.ok).toBe(true);
      seen.push(...page.events.map((e: { id: string }) => e.id));
      before = page.next;
      // Events keep arriving between the pages.
      await store(account, [event(r, 0, `new-${arrived++}`)]);
    } while (before !== null);
    expect(seen).toEqual([...ids].reverse());
    const fresh = await query(edge, account, {
      op: 'history',
      recipient: r,
      before: null,
      limit: 3,
    });
    expect(fresh.events.map((e: { id: string }) => e.id)).toEqual(['new-2', 'new-1', 'new-0']);
  });

  it('marks read by ids and all, answers and publishes the unread count on the recipient subject', async () => {
    const account = uuid();
    const r = uuid();
    const notices: number[] = [];
    const sub = edge.subscribe(subjects.inboxUnread(account, r), {
      callback: (_e, m) => notices.push(JSON.parse(new TextDecoder().decode(m.data)).unread),
    });
    await edge.flush();
    await store(account, [event(r, 1, 'a'), event(r, 2, 'b'), event(r, 3, 'c')]);
    await eventually(() => notices.includes(3), 'the store published unread 3');
    const one = await query(edge, account, { op: 'read', recipient: r, ids: ['b', 'nope'] });
    expect(one).toEqual({ v: 1, ok: true, unread: 2 });
    await eventually(() => notices.at(-1) === 2, 'the read published unread 2');
    const page = await query(ingress, account, {
      op: 'history',
      recipient: r,
      before: null,
      limit: 5,
    });
    expect(page.events.map((e: { id: string; read: boolean }) => [e.id, e.read])).toEqual([
      ['c', false],
      ['b', true],
      ['a', false],
    ]);
    expect(await query(edge, account, { op: 'read', recipient: r, all: true })).toEqual({
      v: 1,
      ok: true,
      unread: 0,
    });
    await eventually(() => notices.at(-1) === 0, 'read all published unread 0');
    sub.unsubscribe();
  });

  it('catches a device up: events above a sequence, oldest first, with their JSON text', async () => {
    const account = uuid();
    const r = uuid();
    const stored = await store(account, [event(r, 1, 'x'), event(r, 2, 'y'), event(r, 3, 'z')]);
    const firstSeq = stored.results[0].seq;
    const all = await query(edge, account, { op: 'after', recipient: r, after: 0, limit: 1000 });
    expect(all.catch_up.map((e: { id: string }) => e.id)).toEqual(['x', 'y', 'z']);
    expect(all.catch_up[0]).toEqual({
      seq: firstSeq,
      id: 'x',
      ts: f.clock.now,
      payload_json: '{"n":1,"text":"héllo"}',
    });
    const rest = await query(edge, account, {
      op: 'after',
      recipient: r,
      after: firstSeq,
      limit: 1,
    });
    expect(rest.catch_up.map((e: { id: string }) => e.id)).toEqual(['y']);
  });

  it("answers only the subject's account: another account sees no event and no count", async () => {
    const owner = uuid();
    const other = uuid();
    const r = uuid();
    await store(owner, [event(r, 1, 'secret')]);
    expect((await query(edge, other, { op: 'unread', recipient: r })).unread).toBe(0);
    const page = await query(edge, other, { op: 'history', recipient: r, before: null, limit: 10 });
    expect(page.events).toEqual([]);
    expect((await query(edge, other, { op: 'read', recipient: r, all: true })).unread).toBe(0);
    expect((await query(edge, owner, { op: 'unread', recipient: r })).unread).toBe(1);
  });

  it('refuses bad requests naming the field, and a payload that is not JSON alone', async () => {
    const account = uuid();
    const r = uuid();
    const bad = await query(edge, account, {
      op: 'history',
      recipient: 'not-a-uuid',
      before: null,
      limit: 10,
    });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_field', field: 'recipient' } });
    const both = await query(edge, account, { op: 'read', recipient: r, ids: ['a'], all: true });
    expect(both).toMatchObject({ ok: false, error: { code: 'invalid_field', field: 'ids' } });
    const limit = await query(edge, account, {
      op: 'history',
      recipient: r,
      before: null,
      limit: 101,
    });
    expect(limit).toMatchObject({ ok: false, error: { code: 'invalid_field', field: 'limit' } });
    const cursor = await query(edge, account, {
      op: 'history',
      recipient: r,
      before: '99999999999999999999',
      limit: 1,
    });
    expect(cursor).toMatchObject({ ok: false, error: { code: 'invalid_field', field: 'before' } });
    const mixed = await store(account, [{ ...event(r, 1), payload_json: '{nope' }, event(r, 2)]);
    expect(mixed.results[0]).toMatchObject({
      error: { code: 'invalid_field', field: 'payload_json' },
    });
    expect(mixed.results[1].seq).toBeGreaterThan(0);
    const far = await store(account, [
      { ...event(r, 3), ts: 8.64e15 },
      { ...event(r, 4), ts: -1e15 },
    ]);
    expect(far.results.map((x: { error?: { field?: string } }) => x.error?.field)).toEqual([
      'ts',
      'ts',
    ]);
    const noEvents = await request(ingress, subjects.inboxStore(account), {
      v: 1,
      key_id: 'k',
      days: 0,
      events: [],
    });
    expect(noEvents).toMatchObject({ ok: false, error: { code: 'invalid_field' } });
  });
});
