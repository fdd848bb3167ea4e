import { PushMessage, subjects } from '@herald/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  delivered,
  type PushFixture,
  pending,
  sleep,
  startPushFixture,
  statusOf,
  subscribed,
} from './push-support.js';
import { eventually, request, uuid } from './support.js';

let p: PushFixture;
beforeAll(async () => {
  p = await startPushFixture();
});
afterAll(async () => {
  await p?.close();
});

describe('push fallback to a real HTTPS push service', () => {
  it('pushes an unproved event within after_ms + 1 s, encrypted (RFC 8291) and VAPID-signed (RFC 8292); /events/status shows it pushed', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const { sub } = await subscribed(p, account, recipient);
    const accepted = Date.now();
    pending(p, account, recipient, id, {
      after_ms: 1500,
      ttl_s: 600,
      title: 'Order shipped',
      body: 'Your parcel left',
      url: '/orders/1',
      payload_json: '{"order":1}',
    });
    await eventually(() => p.push.arrivals(sub.endpoint).length === 1, 'the push arrives', 5000);
    const [a] = p.push.arrivals(sub.endpoint);
    if (!a) throw new Error('no arrival');
    expect(a.at - accepted).toBeGreaterThanOrEqual(1500);
    expect(a.at - accepted).toBeLessThanOrEqual(2500);
    expect(a.error).toBeNull();
    expect(a.contentEncoding).toBe('aes128gcm');
    expect(a.vapid?.sub).toBe('mailto:ops@herald.test');
    expect(a.vapid?.aud).toBe(p.push.origin);
    expect(Number(a.ttl)).toBeGreaterThan(590);
    expect(Number(a.ttl)).toBeLessThanOrEqual(600);
    expect(a.topic).toMatch(/^[A-Za-z0-9_-]{1,32}$/);
    const msg = PushMessage.parse(a.message);
    expect(msg).toMatchObject({
      id,
      ids: [id],
      count: 1,
      title: 'Order shipped',
      body: 'Your parcel left',
      url: '/orders/1',
      payload: { order: 1 },
      tag: a.topic,
    });
    await eventually(async () => {
      const [s] = await statusOf(p, account, [id]);
      return (s?.pushed as { subscriptions: number } | null)?.subscriptions === 1;
    }, 'the event shows pushed to one subscription');
    // The dashboard's list of recent events (op recent) shows it pushed too.
    const recent = await request(p.ingress, subjects.statusQuery, {
      v: 1,
      op: 'recent',
      account_id: account,
      id,
    });
    expect(recent.events).toEqual([
      expect.objectContaining({ id, pushed: expect.objectContaining({ subscriptions: 1 }) }),
    ]);
    // Proved later: the push is not repeated, and nothing waits any more.
    delivered(p, account, id);
    await sleep(2000);
    expect(p.push.arrivals(sub.endpoint)).toHaveLength(1);
    const left = await p.f.db
      .selectFrom('push_due')
      .select('event_id')
      .where('event_id', '=', id)
      .execute();
    expect(left).toEqual([]);
  });

  it('sends nothing for an event proved before it falls due', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const { sub } = await subscribed(p, account, recipient);
    pending(p, account, recipient, id, { after_ms: 2500 });
    await sleep(300);
    delivered(p, account, id);
    await sleep(4000);
    expect(p.push.arrivals(sub.endpoint)).toEqual([]);
    const [s] = await statusOf(p, account, [id]);
    expect(s).toMatchObject({ status: 'delivered', pushed: null });
  });

  it('sends nothing when the proof reaches the writer before the pending record', async () => {
    const [account, recipient, id, id2] = [uuid(), uuid(), uuid(), uuid()];
    const { sub } = await subscribed(p, account, recipient);
    // The same turn (one batch) and a second apart (the proof held back as an orphan first).
    delivered(p, account, id);
    pending(p, account, recipient, id, { after_ms: 1000 });
    delivered(p, account, id2);
    await sleep(1200);
    pending(p, account, recipient, id2, { after_ms: 1000 }, Date.now() - 1000);
    await sleep(5000);
    expect(p.push.arrivals(sub.endpoint)).toEqual([]);
    const rows = await p.f.db
      .selectFrom('push_due')
      .select('event_id')
      .where('event_id', 'in', [id, id2])
      .execute();
    expect(rows).toEqual([]);
  });

  it('sends nothing for an inbox event read before it falls due', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const { sub } = await subscribed(p, account, recipient);
    const kept = await request(p.ingress, subjects.inboxStore(account), {
      v: 1,
      key_id: 'key-1',
      days: 7,
      events: [{ recipient, id, ts: Date.now(), payload_json: '{"n":1}' }],
    });
    expect(kept.ok, JSON.stringify(kept)).toBe(true);
    pending(p, account, recipient, id, { after_ms: 2500 });
    await eventually(async () => {
      const rows = await p.f.db
        .selectFrom('push_due')
        .select('event_id')
        .where('event_id', '=', id)
        .execute();
      return rows.length === 1;
    }, 'the push is due');
    const read = await request(p.edge, subjects.inboxQuery(account), {
      v: 1,
      op: 'read',
      recipient,
      ids: [id],
    });
    expect(read.ok, JSON.stringify(read)).toBe(true);
    await sleep(3500);
    expect(p.push.arrivals(sub.endpoint)).toEqual([]);
  });

  it("ignores another account's proof of the same event id", async () => {
    const [account, other, recipient, id] = [uuid(), uuid(), uuid(), uuid()];
    const { sub } = await subscribed(p, account, recipient);
    delivered(p, other, id);
    pending(p, account, recipient, id, { after_ms: 1500 });
    await sleep(300);
    delivered(p, other, id);
    await eventually(() => p.push.accepted(sub.endpoint).length === 1, 'pushed all the same', 6000);
  });

  it('sends 20 unproved events of one recipient within the window as one push: the count, the newest title', async () => {
    const [account, recipient] = [uuid(), uuid()];
    const { sub } = await subscribed(p, account, recipient);
    const ids = Array.from({ length: 20 }, () => uuid());
    const t0 = Date.now();
    ids.forEach((id, i) => {
      pending(p, account, recipient, id, { after_ms: 1500, title: `Message ${i}` }, t0 + i);
    });
    await eventually(() => p.push.arrivals(sub.endpoint).length >= 1, 'the push arrives', 5000);
    await sleep(1500);
    const all = p.push.arrivals(sub.endpoint);
    expect(all).toHaveLength(1);
    const msg = PushMessage.parse(all[0]?.message);
    expect(msg.count).toBe(20);
    expect(msg.title).toBe('Message 19');
    expect(msg.id).toBe(ids[19]);
    expect(new Set(msg.ids)).toEqual(new Set(ids));
  });

  it('deletes a subscription the push service reports gone (410)', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const { id: subId, sub } = await subscribed(p, account, recipient);
    p.push.answer(sub.endpoint, 410);
    pending(p, account, recipient, id, { after_ms: 1000 });
    await eventually(
      async () => {
        const rows = await p.f.db
          .selectFrom('push_subscriptions')
          .select('id')
          .where('id', '=', subId)
          .execute();
        return rows.length === 0;
      },
      'the subscription is deleted',
      6000,
    );
    expect(p.push.arrivals(sub.endpoint)).toHaveLength(1);
    const [s] = await statusOf(p, account, [id]);
    expect(s?.pushed).toBeNull();
  });

  it('retries a 429 after its Retry-After, and a 500 after the schedule, then succeeds once', async () => {
    const [account, r1, r2, e1, e2] = [uuid(), uuid(), uuid(), uuid(), uuid()];
    const a = await subscribed(p, account, r1);
    const b = await subscribed(p, account, r2);
    p.push.answer(a.sub.endpoint, 429, 1, { 'retry-after': '2' });
    p.push.answer(b.sub.endpoint, 500, 2);
    pending(p, account, r1, e1, { after_ms: 1000 });
    pending(p, account, r2, e2, { after_ms: 1000 });
    await eventually(() => p.push.accepted(a.sub.endpoint).length === 1, '429 then accepted', 8000);
    await eventually(
      () => p.push.accepted(b.sub.endpoint).length === 1,
      '500s then accepted',
      8000,
    );
    const [first, second] = p.push.arrivals(a.sub.endpoint);
    expect(first?.status).toBe(429);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1900);
    expect(p.push.arrivals(b.sub.endpoint).map((x) => x.status)).toEqual([500, 500, 201]);
    await sleep(1000);
    expect(p.push.arrivals(a.sub.endpoint)).toHaveLength(2);
    expect(p.push.arrivals(b.sub.endpoint)).toHaveLength(3);
    const [s] = await statusOf(p, account, [e1]);
    expect(s?.pushed).toMatchObject({ subscriptions: 1 });
  });

  it('does not push an event proved while its push waits for a retry', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const { sub } = await subscribed(p, account, recipient);
    p.push.answer(sub.endpoint, 429, 1, { 'retry-after': '4' });
    pending(p, account, recipient, id, { after_ms: 1000 });
    await eventually(() => p.push.arrivals(sub.endpoint).length === 1, 'the first attempt', 5000);
    delivered(p, account, id);
    await sleep(6000);
    expect(p.push.arrivals(sub.endpoint)).toHaveLength(1);
  });

  it('resends a message the push service finds too large (413) without its payload', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const { sub } = await subscribed(p, account, recipient);
    p.push.answer(sub.endpoint, 413);
    pending(p, account, recipient, id, { after_ms: 1000, payload_json: '{"big":true}' });
    await eventually(() => p.push.accepted(sub.endpoint).length === 1, 'the thin resend', 5000);
    const [big, small] = p.push.arrivals(sub.endpoint);
    expect(PushMessage.parse(big?.message).payload).toEqual({ big: true });
    expect(PushMessage.parse(small?.message).payload).toBeUndefined();
    expect(PushMessage.parse(small?.message).id).toBe(id);
  });

  it('drops the due events of a recipient without subscriptions, counting them', async () => {
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    await subscribed(p, account, uuid());
    const before = await counted('no_subscription');
    pending(p, account, recipient, id, { after_ms: 500 });
    // Counted when the sender finds no subscription, then the due row deleted with the round's
    // results: both, in that order, so the test waits for the second.
    await eventually(
      async () => (await counted('no_subscription')) === before + 1,
      'counted',
      30_000,
    );
    await eventually(
      async () =>
        (
          await p.f.db
            .selectFrom('push_due')
            .select('event_id')
            .where('event_id', '=', id)
            .execute()
        ).length === 0,
      'the due row deleted',
      30_000,
    );
    expect(await counted('no_subscription')).toBe(before + 1);
  });
});

async function counted(result: string): Promise<number> {
  const m = await p.f.service.registry.getSingleMetric('herald_push_messages_total')?.get();
  return (m?.values ?? [])
    .filter((v) => v.labels.result === result)
    .reduce((sum, v) => sum + v.value, 0);
}
