import { randomUUID } from 'node:crypto';
import { DevicePositions } from '@herald/queue';
import type { ServiceProcess } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  keys,
  openClient,
  queueEvent,
  queueMany,
  type RunningEdge,
  type Stack,
  startEdge,
  startEdgeProcess,
  startStack,
  waitUntil,
} from './fixture.js';

// An edge killed with -9 in the middle of a device's catch-up in runs: what the device proved up
// to the end of a run was recorded; the rest comes again from another edge, in order, none lost.
const RUN = 50;
const RUNS = { DEVICE_CATCH_UP_RUN: String(RUN), QUEUE_FRAME_EVENTS: '20' };

let stack: Stack;
let doomed: ServiceProcess | undefined;
let survivor: RunningEdge;

beforeAll(async () => {
  stack = await startStack();
  // As main.ts runs it, in its own process, so kill -9 gives it no chance to record anything.
  doomed = await startEdgeProcess(stack, undefined, RUNS);
  survivor = await startEdge(stack, RUNS);
});

afterAll(async () => {
  await doomed?.stop('SIGKILL');
  await survivor?.close();
  await stack?.stop();
});

function openTablet(port: number, recipient: string, autoAck: boolean) {
  const query = new URLSearchParams({
    api_key: keys.mobileA,
    recipient,
    client: 'mobile',
    device: 'tablet',
    batch: '1',
  }).toString();
  return openClient(stack, port, { query, v1: true, autoAck });
}

describe('an edge killed with -9 mid-catch-up', () => {
  it('leaves the device every event it had not proven by a recorded run, in order', async () => {
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(stack, ACCOUNT_A, recipient, 3 * RUN);
    const first = openTablet(doomed?.port ?? 0, recipient, false);
    await waitUntil('two runs', () => first.events.length >= 2 * RUN);
    // Events frames, not one per event.
    expect(Math.max(...first.frameIds.map((f) => f.length))).toBeGreaterThan(1);
    // It proves the first run and part of the second: the first run's end is recorded at once.
    const proved = RUN + 7;
    first.ackList(ids.slice(0, proved));
    const positions = new DevicePositions(stack.nc, 5000);
    await waitUntil('the first run recorded', async () => {
      const at = await positions.read(ACCOUNT_A, recipient, 'tablet');
      return (at?.seq ?? 0) >= (seqs[RUN - 1] as number);
    });
    const recorded = (await positions.read(ACCOUNT_A, recipient, 'tablet'))?.seq ?? 0;
    await doomed?.stop('SIGKILL');
    doomed = undefined;
    await first.closed;

    const again = openTablet(survivor.port, recipient, true);
    const from = seqs.findIndex((s) => s > recorded);
    await waitUntil('the rest', () => again.events.length >= ids.length - from, 20_000);
    await queueEvent(stack, ACCOUNT_A, recipient, '{"n":-1}', 'sentinel');
    await waitUntil('the sentinel', () => again.events.some((e) => e.id === 'sentinel'));
    // Everything after the recorded run's end, once each and in order (what was proven after it
    // comes a second time): nothing lost, nothing it recorded as proven again.
    expect(again.events.map((e) => e.id)).toEqual([...ids.slice(from), 'sentinel']);
    expect(from).toBeGreaterThanOrEqual(RUN);
    expect(from).toBeLessThanOrEqual(proved);
    again.ws.close();
    await again.closed;
  });
});
