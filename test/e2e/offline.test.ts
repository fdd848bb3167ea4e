import { describe, expect, it } from 'vitest';
import { connect, eventually, newTenant, notify, recipient, useStack } from './fixtures.js';

describe('offline queue and delivery on connect', () => {
  const stack = useStack();

  it('answers 202 for an offline recipient and pushes the event when they connect', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const res = await notify(s, tenant, to, { title: 'while you were away', n: 1 });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      status: 'User offline, notification saved',
      id: expect.any(String),
    });

    const sock = await connect(s, { apiKey: tenant.key.key, recipient: to });
    const [frame] = await sock.waitForFrames(1);
    expect(JSON.parse(frame?.text ?? '')).toEqual({ title: 'while you were away', n: 1 });
    await sock.close();

    // Delivered (plain framing acks after the write): a new connection gets nothing again; a
    // live marker is the first frame it sees.
    const again = await connect(s, { apiKey: tenant.key.key, recipient: to });
    const marker = await notify(s, tenant, to, 'marker');
    expect(marker.status).toBe(200);
    const [first] = await again.waitForFrames(1);
    expect(first?.text).toBe('"marker"');
    await again.close();
  });

  it('delivers 100 queued events in order, with the ids the 202s gave', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await notify(s, tenant, to, { seq: i });
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    const sock = await connect(s, { apiKey: tenant.key.key, recipient: to, v1: true });
    await sock.waitForFrames(100, 20_000);
    const events = sock.events();
    expect(events.map((e) => (e.payload as { seq: number }).seq)).toEqual([...Array(100).keys()]);
    expect(events.map((e) => e.id)).toEqual(ids);
    await sock.close();
  });

  it('delivers queued events to a batch=1 client in events frames, in order, each id once, and again what it did not ack', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await notify(s, tenant, to, { seq: i });
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    const opts = { apiKey: tenant.key.key, recipient: to, v1: true, batch: true };
    const first = await connect(s, { ...opts, autoAck: false });
    const got = await first.waitForEvents(60, 20_000);
    expect(got.map((e) => e.id)).toEqual(ids);
    expect(got.map((e) => (e.payload as { seq: number }).seq)).toEqual([...Array(60).keys()]);
    expect(first.frames.some((f) => f.envelope?.type === 'events')).toBe(true);
    // Half acked in one list ack, then a clean close: the acks are read before the close.
    first.ackList(ids.slice(0, 30));
    await first.close();
    const again = await connect(s, opts);
    const rest = await again.waitForEvents(30, 20_000);
    expect(rest.map((e) => e.id)).toEqual(ids.slice(30));
    const marker = await notify(s, tenant, to, 'marker');
    expect(marker.status).toBe(200);
    await eventually(() => again.events().some((e) => e.payload === 'marker'), 'the marker');
    const seen = again.events();
    expect(seen.map((e) => e.id).slice(0, 30)).toEqual(ids.slice(30));
    expect(seen).toHaveLength(31);
    await again.close();
  });

  it('loses nothing when a herald.v1 socket drops mid-drain: unacked events come again with the same ids', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await notify(s, tenant, to, { seq: i });
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    const first = await connect(s, {
      apiKey: tenant.key.key,
      recipient: to,
      v1: true,
      autoAck: false,
    });
    await first.waitForFrames(5);
    const acked = first
      .events()
      .slice(0, 5)
      .map((e) => e.id);
    for (const id of acked) first.ack(id);
    // Give the acks time to reach the edge before the connection dies without a close handshake.
    await new Promise((r) => setTimeout(r, 300));
    const seenUnacked = first
      .events()
      .slice(5)
      .map((e) => e.id);
    await first.drop();

    const second = await connect(s, { apiKey: tenant.key.key, recipient: to, v1: true });
    await eventually(
      () => new Set(second.events().map((e) => e.id)).size >= 35,
      'the 35 unacked events to arrive again',
      20_000,
    );
    const secondIds = second.events().map((e) => e.id);
    // Everything not acked the first time arrives now, with the same ids and in order.
    const expected = ids.filter((id) => !acked.includes(id));
    expect([...new Set(secondIds)]).toEqual(expected);
    for (const id of seenUnacked) expect(secondIds).toContain(id);
    // Nothing acked comes back.
    for (const id of acked) expect(secondIds).not.toContain(id);
    await second.close();
  });

  it('keeps queued events for a plain socket that never connected, across several dispatches and tabs', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const a = await notify(s, tenant, to, { i: 1 });
    const b = await notify(s, tenant, to, { i: 2 });
    expect([a.status, b.status]).toEqual([202, 202]);
    const sock = await connect(s, { apiKey: tenant.key.key, recipient: to });
    const frames = await sock.waitForFrames(2);
    expect(frames.map((f) => JSON.parse(f.text))).toEqual([{ i: 1 }, { i: 2 }]);
    await sock.close();
  });
});
