import { randomUUID } from 'node:crypto';
import { DevicePositions, queueStreamOf } from '@herald/queue';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  consumerInfo,
  expectRefusal,
  keys,
  openClient,
  queueEvent,
  queueMany,
  type RunningEdge,
  type Stack,
  startEdge,
  type TestClient,
  useEdgeStack,
  waitUntil,
} from './fixture.js';

let stack: Stack;
let edge: RunningEdge;
let positions: DevicePositions;

useEdgeStack((started) => {
  ({ stack, edge } = started);
  positions = new DevicePositions(stack.nc, 5000);
});

function query(recipient: string, device?: string): string {
  const q = new URLSearchParams({ api_key: keys.mobileA, recipient, client: 'mobile' });
  if (device !== undefined) q.set('device', device);
  return q.toString();
}

function openDevice(recipient: string, device: string | undefined, v1 = true, autoAck = true) {
  return openClient(stack, edge.port, { query: query(recipient, device), v1, autoAck });
}

/** What a plain client received, as the `n` of each `{"n":…}` payload. */
const plainNs = (c: TestClient) => c.frames.map((f) => (JSON.parse(f) as { n: number }).n);

async function close(c: TestClient): Promise<void> {
  c.ws.close();
  await c.closed;
}

/**
 * Queues one more event and waits for `client` to get it: whatever the edge had to write to that
 * socket before (a stale or repeated event) arrived first, so the client's list is then complete.
 */
async function settle(recipient: string, clients: TestClient[], n = 999): Promise<void> {
  await queueEvent(stack, ACCOUNT_A, recipient, `{"n":${n}}`);
  for (const c of clients)
    await waitUntil('the sentinel', () => c.frames.some((f) => f.includes(`"n":${n}`)));
}

const idsOf = (c: TestClient) => c.events.map((e) => e.id);

describe('per-device delivery of queued events', () => {
  for (const count of [2, 3, 10]) {
    it(`gives each of ${count} devices of one recipient every queued event once`, async () => {
      const recipient = randomUUID();
      const { ids } = await queueMany(stack, ACCOUNT_A, recipient, 5);
      const devices: TestClient[] = [];
      for (let d = 0; d < count; d++) {
        devices.push(openDevice(recipient, `dev-${d}`));
        // Half of them while the others are still catching up, half once a first one is done.
        if (d === Math.floor(count / 2))
          await waitUntil('a first device', () => (devices[0]?.events.length ?? 0) >= 5);
      }
      for (const c of devices) await waitUntil('5 events', () => c.events.length >= 5);
      // The durable consumer was acked for every event (the status is `delivered`).
      await waitUntil('the durable consumer acked', async () => {
        const info = await consumerInfo(stack, ACCOUNT_A, recipient);
        return info?.num_pending === 0 && info.num_ack_pending === 0;
      });
      await settle(recipient, devices);
      // Once each, in stream order, the sentinel last.
      for (const c of devices) {
        expect(idsOf(c).slice(0, 5)).toEqual(ids);
        expect(c.events).toHaveLength(6);
      }
      await Promise.all(devices.map(close));
      // Every device reconnecting gets nothing it proved before.
      const again = devices.map((_, d) => openDevice(recipient, `dev-${d}`));
      await Promise.all(again.map((c) => c.opened));
      await settle(recipient, again, 1000);
      for (const c of again) expect(c.events.map((e) => e.payload)).toEqual([{ n: 1000 }]);
      await Promise.all(again.map(close));
    });
  }

  it('gives devices on two edges every queued event, whichever edge drains', async () => {
    const other = await startEdge(stack);
    try {
      const recipient = randomUUID();
      const { ids } = await queueMany(stack, ACCOUNT_A, recipient, 5);
      const phone = openDevice(recipient, 'phone');
      const laptop = openClient(stack, other.port, { query: query(recipient, 'laptop'), v1: true });
      await waitUntil('both', () => phone.events.length >= 5 && laptop.events.length >= 5);
      // Queued while both are connected (a live request no socket answered in time, say).
      await queueMany(stack, ACCOUNT_A, recipient, 2, 5);
      await waitUntil('7 each', () => phone.events.length >= 7 && laptop.events.length >= 7);
      await settle(recipient, [phone, laptop]);
      for (const c of [phone, laptop]) {
        expect(idsOf(c).slice(0, 5)).toEqual(ids);
        expect(c.events.map((e) => e.payload)).toEqual(
          [0, 1, 2, 3, 4, 5, 6, 999].map((n) => ({ n })),
        );
      }
      await Promise.all([close(phone), close(laptop)]);
    } finally {
      await other.close();
    }
  });

  it('gives plain-framing devices every queued event once, proven by pings', async () => {
    const recipient = randomUUID();
    await queueMany(stack, ACCOUNT_A, recipient, 3);
    const first = openDevice(recipient, 'plain-1', false);
    await waitUntil('3 events on the first', () => first.frames.length >= 3);
    const second = openDevice(recipient, 'plain-2', false);
    await waitUntil('3 events on the second', () => second.frames.length >= 3);
    await settle(recipient, [first, second]);
    expect(plainNs(first)).toEqual([0, 1, 2, 999]);
    expect(plainNs(second)).toEqual([0, 1, 2, 999]);
    await Promise.all([close(first), close(second)]);
    const back = openDevice(recipient, 'plain-2', false);
    await back.opened;
    await settle(recipient, [back], 1000);
    expect(plainNs(back)).toEqual([1000]);
    await close(back);
  });

  it('gives a device that left in the middle of its catch-up the rest, and not what it proved', async () => {
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(stack, ACCOUNT_A, recipient, 10);
    const phone = openDevice(recipient, 'phone');
    await waitUntil('the phone', () => phone.events.length >= 10);
    const laptop = openDevice(recipient, 'laptop', true, false);
    await waitUntil('the laptop', () => laptop.events.length >= 10);
    for (const id of idsOf(laptop).slice(0, 4)) laptop.ack(id);
    const key = [ACCOUNT_A, recipient, 'laptop'] as const;
    await waitUntil(
      'the laptop position',
      async () => (await positions.read(...key))?.seq === seqs[3],
    );
    await close(laptop);
    const back = openDevice(recipient, 'laptop');
    await waitUntil('the rest', () => back.events.length >= 6);
    await settle(recipient, [back, phone]);
    expect(idsOf(back).slice(0, 6)).toEqual(ids.slice(4));
    expect(back.events).toHaveLength(7);
    expect(phone.events).toHaveLength(11);
    await Promise.all([close(back), close(phone)]);
  });

  it('gives a device id reused after retention deleted the events nothing stale', async () => {
    const recipient = randomUUID();
    const { seqs } = await queueMany(stack, ACCOUNT_A, recipient, 3);
    const phone = openDevice(recipient, 'phone');
    await waitUntil('the phone', () => phone.events.length >= 3);
    // The durable consumer is acked by the drain's copies, which find the events proven; a socket
    // closed before they come leaves the acks to the next connect, so it stays open until then.
    await waitUntil(
      'every ack',
      async () =>
        (await consumerInfo(stack, ACCOUNT_A, recipient))?.ack_floor.stream_seq === seqs[2],
    );
    await close(phone);
    // What retention's weekly run does: delete, one by one, the events at or below the ack floor.
    const stream = queueStreamOf(ACCOUNT_A, recipient);
    for (const seq of seqs) await stack.jsm.streams.deleteMessage(stream, seq, false);
    const reused = openDevice(recipient, 'phone');
    const fresh = openDevice(recipient, 'tablet');
    await Promise.all([reused.opened, fresh.opened]);
    await settle(recipient, [reused, fresh]);
    expect(reused.events.map((e) => e.payload)).toEqual([{ n: 999 }]);
    expect(fresh.events.map((e) => e.payload)).toEqual([{ n: 999 }]);
    await Promise.all([close(reused), close(fresh)]);
  });

  it('keeps the old behaviour without device: a queued event reaches the first socket only', async () => {
    const recipient = randomUUID();
    const { ids } = await queueMany(stack, ACCOUNT_A, recipient, 3);
    const first = openDevice(recipient, undefined);
    await waitUntil('the first', () => first.events.length >= 3);
    await close(first);
    const second = openDevice(recipient, undefined);
    await second.opened;
    await settle(recipient, [second]);
    expect(idsOf(first)).toEqual(ids);
    expect(second.events.map((e) => e.payload)).toEqual([{ n: 999 }]);
    await close(second);
    const kv = await stack.js.views.kv('herald_device_positions');
    const keysLeft: string[] = [];
    for await (const k of await kv.keys(`${ACCOUNT_A}.${recipient}.>`)) keysLeft.push(k);
    expect(keysLeft).toEqual([]);
  });

  it('refuses a bad device id on the HTTP upgrade, naming the field', async () => {
    const recipient = randomUUID();
    for (const device of ['', 'x'.repeat(65), 'a.b', 'a b', 'é']) {
      const refusal = await expectRefusal(stack, edge.port, { query: query(recipient, device) });
      expect(refusal.status).toBe(400);
      expect(refusal.body).toMatchObject({ error: { code: 'invalid_field', field: 'device' } });
      expect((refusal.body as { error: { message: string } }).error.message).toContain(
        '1 to 64 characters',
      );
    }
    // At the edge: 64 characters open the socket (opened rejects otherwise).
    const ok = openDevice(recipient, 'x'.repeat(64));
    await ok.opened;
    expect(ok.ws.readyState).toBe(ok.ws.OPEN);
    await close(ok);
  });
});
