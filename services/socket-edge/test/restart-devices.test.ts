import { randomUUID } from 'node:crypto';
import { DevicePositions, QueueFloors, queueStreamOf } from '@herald/queue';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  consumerInfo,
  keys,
  openClient,
  queueEvent,
  queueMany,
  type RunningEdge,
  type Stack,
  type TestClient,
  useEdgeStack,
  waitUntil,
} from './fixture.js';

/**
 * Issue 42: a nats-server restart with recipient consumers' state in memory (the default) must not
 * make any device of the recipient miss an event. The new consumer is moved past the recorded ack
 * floor; the acked events stay stored until retention, so a device that never saw them (a second
 * one, connecting later) still catches up on them from the stream. Real nats-server, restarted on
 * its store; the SDK's default client (a device id, `batch=1`, list acks).
 */
let stack: Stack;
let edge: RunningEdge;
let floors: QueueFloors;
let positions: DevicePositions;

useEdgeStack((started) => {
  ({ stack, edge } = started);
  floors = new QueueFloors(stack.nc, 5000);
  positions = new DevicePositions(stack.nc, 5000);
});

function openDevice(recipient: string, device: string): TestClient {
  const query = new URLSearchParams({
    api_key: keys.mobileA,
    recipient,
    client: 'mobile',
    device,
    batch: '1',
  }).toString();
  return openClient(stack, edge.port, { query, v1: true });
}

async function close(c: TestClient): Promise<void> {
  c.ws.close();
  await c.closed;
}

/** Restarts nats-server on its store and waits until JetStream answers again. */
async function restartNats(): Promise<void> {
  await stack.nats.restart();
  await waitUntil(
    'JetStream back',
    async () =>
      stack.jsm.streams
        .info(queueStreamOf(ACCOUNT_A, randomUUID()))
        .then(() => true)
        .catch(() => false),
    20_000,
  );
}

const idsOf = (c: TestClient) => c.events.map((e) => e.id);

describe('a nats-server restart with consumer state in memory, two devices', () => {
  // `acked after the floor`: how many of the first drain's events were acked after the last
  // recorded floor (0: the drain's record covered them all; 2: the record lagged, as when the
  // restart comes before the drain's record). Those the new consumer delivers again: at least
  // once, what the promise allows; the first device's position covers them, so they are proven
  // without a write, and no device gets them twice.
  for (const ackedAfterFloor of [0, 2]) {
    it(`gives the device that drained only what is new and a later device every event (${ackedAfterFloor} acked after the floor)`, async () => {
      const recipient = randomUUID();
      const stream = queueStreamOf(ACCOUNT_A, recipient);
      const first = await queueMany(stack, ACCOUNT_A, recipient, 5);
      const phone = openDevice(recipient, 'phone');
      await waitUntil('the phone drains five', () => phone.events.length >= 5);
      const lastSeq = first.seqs[4] as number;
      await waitUntil('the floor and the phone position recorded', async () => {
        const floor = await floors.read(ACCOUNT_A, recipient);
        const at = await positions.read(ACCOUNT_A, recipient, 'phone');
        return floor?.seq === lastSeq && at?.seq === lastSeq;
      });
      await close(phone);
      if (ackedAfterFloor > 0) {
        const k = 4 - ackedAfterFloor;
        await floors.record(ACCOUNT_A, recipient, {
          v: 1,
          stream,
          seq: first.seqs[k] as number,
          id: first.ids[k] as string,
        });
      }
      const later = await queueMany(stack, ACCOUNT_A, recipient, 3, 5);

      await restartNats();
      expect(await consumerInfo(stack, ACCOUNT_A, recipient)).toBeUndefined();
      const phoneAgain = openDevice(recipient, 'phone');
      await waitUntil('the phone gets the three new ones', () => phoneAgain.events.length >= 3);
      const laptop = openDevice(recipient, 'laptop');
      await waitUntil('the laptop gets all eight', () => laptop.events.length >= 8);

      // A sentinel queued last: once each socket has it, whatever was to be written before it
      // (a repeat included) has arrived.
      const sentinel = randomUUID();
      const sentinelSeq = await queueEvent(stack, ACCOUNT_A, recipient, '{"n":999}', sentinel);
      for (const c of [phoneAgain, laptop])
        await waitUntil('the sentinel', () => idsOf(c).includes(sentinel));
      expect(idsOf(phoneAgain)).toEqual([...later.ids, sentinel]);
      expect(idsOf(laptop)).toEqual([...first.ids, ...later.ids, sentinel]);

      // The durable consumer, re-created after the restart, delivered the events after the
      // recorded floor only, each once: the acked ones up to the floor were not delivered again.
      await waitUntil('the consumer acked up to the sentinel', async () => {
        const info = await consumerInfo(stack, ACCOUNT_A, recipient);
        return info?.ack_floor.stream_seq === sentinelSeq && info.num_ack_pending === 0;
      });
      const info = await consumerInfo(stack, ACCOUNT_A, recipient);
      expect(info?.delivered.consumer_seq).toBe(ackedAfterFloor + later.ids.length + 1);
      // Nothing was deleted to get there: every event is still stored until retention.
      for (const seq of [...first.seqs, ...later.seqs]) {
        const stored = await stack.jsm.streams.getMessage(stream, { seq });
        expect(stored.seq).toBe(seq);
      }
      await Promise.all([close(phoneAgain), close(laptop)]);
    }, 60_000);
  }
});
