import { randomUUID } from 'node:crypto';
import { DevicePositions } from '@herald/queue';
import type { ServiceProcess } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  consumerInfo,
  keys,
  openClient,
  queueMany,
  type RunningEdge,
  type Stack,
  startEdge,
  startEdgeProcess,
  startStack,
  type TestClient,
  waitUntil,
} from './fixture.js';

/**
 * Issue 42: an edge killed with -9 in the middle of a device's catch-up (a large backlog being
 * written to the device's socket, the device's position recorded for part of it) loses nothing:
 * the device, reconnecting through another edge, gets every event it had not proven (some twice
 * allowed, none lost), counted by id. Black-box through sockets and the KV position, so it holds
 * for any way the edge feeds a device (one event a frame, or runs of `events` frames).
 */
let stack: Stack;
let survivor: RunningEdge;
let doomed: ServiceProcess | undefined;
let positions: DevicePositions;

beforeAll(async () => {
  stack = await startStack();
  // The edge that dies runs as its own process, as main.ts runs it: kill -9 gives it no chance
  // to record a position, nak a delivery or close a socket cleanly.
  doomed = await startEdgeProcess(stack);
  survivor = await startEdge(stack);
  positions = new DevicePositions(stack.nc, 5000);
});

afterAll(async () => {
  await doomed?.stop('SIGKILL');
  await survivor?.close();
  await stack?.stop();
});

/** The SDK's default client: a device id, `batch=1`, herald.v1. */
function openDevice(port: number, recipient: string, device: string, autoAck: boolean) {
  const query = new URLSearchParams({
    api_key: keys.mobileA,
    recipient,
    client: 'mobile',
    device,
    batch: '1',
  }).toString();
  return openClient(stack, port, { query, v1: true, autoAck });
}

const idsOf = (c: TestClient) => c.events.map((e) => e.id);

describe('an edge killed with -9 mid-catch-up of a device', () => {
  it('leaves the device every event it had not proven, on another edge, none lost', async () => {
    const COUNT = 2000;
    // The device proves the first PROVEN events and then stops acking: the edge has written past
    // them (up to the socket's unproven caps) and waits for room, its catch-up not done.
    const PROVEN = 700;
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(stack, ACCOUNT_A, recipient, COUNT);
    const nOf = new Map(ids.map((id, n) => [id, n]));

    const phone = openDevice(doomed?.port ?? 0, recipient, 'phone', false);
    phone.ws.on('message', () => {
      // Each frame's ids (an `event` frame or an `events` run), acked as the SDK does, but only
      // those before PROVEN.
      const frame = phone.frameIds.at(-1) ?? [];
      const ack = frame.filter((id) => (nOf.get(id) ?? COUNT) < PROVEN);
      if (ack.length === 1) phone.ack(ack[0] as string);
      else if (ack.length > 1) phone.ackList(ack);
    });
    await phone.opened;
    // Mid-run: part of the backlog proven and its position recorded (however the edge batches
    // those records), more written past the proofs, the rest not written yet.
    await waitUntil(
      'a position recorded, and more written than proven',
      async () =>
        ((await positions.read(ACCOUNT_A, recipient, 'phone'))?.seq ?? 0) > 0 &&
        phone.events.length > PROVEN,
      60_000,
    );
    const writtenBeforeKill = phone.events.length;
    expect(writtenBeforeKill).toBeLessThan(COUNT);

    await doomed?.stop('SIGKILL');
    doomed = undefined;
    await phone.closed;
    // The position recorded covers proven events only: partly recorded, never past the proofs.
    const recorded = (await positions.read(ACCOUNT_A, recipient, 'phone'))?.seq ?? 0;
    expect(recorded).toBeGreaterThanOrEqual(seqs[0] as number);
    expect(recorded).toBeLessThanOrEqual(seqs[PROVEN - 1] as number);
    const coveredByPosition = seqs.filter((seq) => seq <= recorded).length;

    const again = openDevice(survivor.port, recipient, 'phone', true);
    await again.opened;
    const unproven = ids.slice(PROVEN);
    await waitUntil(
      'every event the device had not proven',
      () => {
        const got = new Set(idsOf(again));
        return unproven.every((id) => got.has(id));
      },
      60_000,
    );
    // None lost: every queued id, proven before the kill or received after it.
    const union = new Set([...ids.slice(0, PROVEN), ...idsOf(again)]);
    expect(ids.filter((id) => !union.has(id))).toEqual([]);
    // In stream order (a repeat only ever repeats an earlier id).
    const firstSeen = idsOf(again).filter((id, i, all) => all.indexOf(id) === i);
    const order = firstSeen.map((id) => nOf.get(id) ?? -1);
    expect(order).toEqual([...order].sort((x, y) => x - y));
    // What the recorded position covers was proven: it is not written again. Proven events above
    // it may come again (at least once; the client drops them by id).
    expect(idsOf(again).filter((id) => (nOf.get(id) ?? 0) < coveredByPosition)).toEqual([]);
    // The queue of record agrees: the durable consumer acked every event.
    await waitUntil(
      'the durable consumer acked everything',
      async () => {
        const info = await consumerInfo(stack, ACCOUNT_A, recipient);
        return (
          info?.ack_floor.stream_seq === (seqs[COUNT - 1] as number) && info.num_ack_pending === 0
        );
      },
      30_000,
    );
    const repeats = idsOf(again).length - firstSeen.length;
    const provenAgain = idsOf(again).filter((id) => (nOf.get(id) ?? 0) < PROVEN).length;
    console.info(
      `edge killed mid-catch-up: ${writtenBeforeKill} of ${COUNT} written, ${PROVEN} proven, position recorded over ${coveredByPosition}; after the reconnect ${idsOf(again).length} received: ${provenAgain} proven ones again, ${writtenBeforeKill - PROVEN} that had reached the dead socket unproven, ${repeats} repeats within the new session; none lost`,
    );
    again.ws.close();
    await again.closed;
  }, 180_000);
});
