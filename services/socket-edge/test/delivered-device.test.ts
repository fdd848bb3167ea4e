import { randomUUID } from 'node:crypto';
import { StatusBatchEnvelope, StatusEvent, subjects } from '@herald/proto';
import type { Subscription } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  keys,
  openClient,
  queueMany,
  type RunningEdge,
  type Stack,
  startEdge,
  startStack,
  type TestClient,
  waitUntil,
} from './fixture.js';

let stack: Stack;
let edge: RunningEdge;
let sub: Subscription;
/** Every `delivered` record the edge published for account A. */
const delivered: StatusEvent[] = [];

beforeAll(async () => {
  stack = await startStack();
  edge = await startEdge(stack);
  // What the status stream would keep: the records on the account's status subject.
  sub = stack.nc.subscribe(subjects.status(ACCOUNT_A), {
    callback: (err, msg) => {
      if (err) return;
      const body: unknown = msg.json();
      const batch = StatusBatchEnvelope.safeParse(body);
      const records = batch.success ? batch.data.records : [body];
      for (const r of records) {
        const record = StatusEvent.parse(r);
        if (record.status === 'delivered') delivered.push(record);
      }
    },
  });
  await stack.nc.flush();
});

afterAll(async () => {
  sub?.unsubscribe();
  await edge?.close();
  await stack?.stop();
});

function open(recipient: string, device: string | undefined, v1: boolean): TestClient {
  const q = new URLSearchParams({ api_key: keys.mobileA, recipient, client: 'mobile' });
  if (device !== undefined) q.set('device', device);
  return openClient(stack, edge.port, { query: q.toString(), v1 });
}

/** The `delivered` records of `ids`, once each has one. */
async function deliveredOf(ids: string[]): Promise<StatusEvent[]> {
  await waitUntil(`delivered records of ${ids.length} events`, () =>
    ids.every((id) => delivered.some((r) => r.id === id)),
  );
  return ids.map((id) => delivered.find((r) => r.id === id) as StatusEvent);
}

async function close(c: TestClient): Promise<void> {
  c.ws.close();
  await c.closed;
}

describe('a delivered record names the device that proved receipt (issue 39)', () => {
  for (const v1 of [true, false]) {
    it(`names it for drained events proven by a ${v1 ? 'herald.v1 ack' : 'plain ping'}`, async () => {
      const recipient = randomUUID();
      const { ids } = await queueMany(stack, ACCOUNT_A, recipient, 3);
      const phone = open(recipient, `phone-${v1 ? 'v1' : 'plain'}`, v1);
      for (const record of await deliveredOf(ids)) {
        expect(record).toMatchObject({
          recipient,
          status: 'delivered',
          device: `phone-${v1 ? 'v1' : 'plain'}`,
        });
      }
      await close(phone);
    });
  }

  it('names the second device for what its catch-up wrote after the first had them acked', async () => {
    const recipient = randomUUID();
    const { ids } = await queueMany(stack, ACCOUNT_A, recipient, 2);
    const phone = open(recipient, 'phone', true);
    expect((await deliveredOf(ids)).map((r) => r.device)).toEqual(['phone', 'phone']);
    await close(phone);
    // The consumer acked them: the tablet's catch-up reads them from the stream, no drain copy
    // waiting on its writes, so its proofs are the feed's own delivered records.
    const before = delivered.length;
    const tablet = open(recipient, 'tablet', true);
    await waitUntil('the tablet got both', () => tablet.events.length >= 2);
    await waitUntil('its records', () => delivered.length >= before + 2);
    expect(
      delivered
        .slice(before)
        .map((r) => [r.id, r.device])
        .sort(),
    ).toEqual(ids.map((id) => [id, 'tablet']).sort());
    await close(tablet);
  });

  it('leaves device out for a socket that connected without one', async () => {
    const recipient = randomUUID();
    const { ids } = await queueMany(stack, ACCOUNT_A, recipient, 2);
    const anonymous = open(recipient, undefined, true);
    for (const record of await deliveredOf(ids)) {
      expect(record.recipient).toBe(recipient);
      expect('device' in record).toBe(false);
    }
    await close(anonymous);
  });
});
