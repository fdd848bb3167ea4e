import { randomUUID } from 'node:crypto';
import { encodeEventFrame } from '@herald/proto';
import { DevicePositions } from '@herald/queue';
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
  sendLive,
  startEdge,
  type TestClient,
  useEdgeStack,
  waitUntil,
} from './fixture.js';

/**
 * herald.v1 `batch=1` sockets (issue 31 item 4): queued events ready together come in one
 * `events` frame, acked with one list ack, each still JetStream-acked only once its id is acked.
 */
let stack: Stack;
/** QUEUE_FRAME_EVENTS 16, so a drain of a few dozen events needs several frames. */
let edge: RunningEdge;
let positions: DevicePositions;

useEdgeStack(
  (started) => {
    ({ stack, edge } = started);
    positions = new DevicePositions(stack.nc, 5000);
  },
  { QUEUE_FRAME_EVENTS: '16' },
);

function query(recipient: string, opts: { device?: string; batch?: boolean } = {}): string {
  const q = new URLSearchParams({ api_key: keys.mobileA, recipient, client: 'mobile' });
  if (opts.device !== undefined) q.set('device', opts.device);
  if (opts.batch) q.set('batch', '1');
  return q.toString();
}

function open(
  on: RunningEdge,
  recipient: string,
  opts: { device?: string; batch?: boolean; autoAck?: boolean } = {},
): TestClient {
  return openClient(stack, on.port, {
    query: query(recipient, opts),
    v1: true,
    autoAck: opts.autoAck ?? true,
  });
}

async function close(c: TestClient): Promise<void> {
  c.ws.close();
  await c.closed;
}

const ackFloor = async (recipient: string) =>
  (await consumerInfo(stack, ACCOUNT_A, recipient))?.ack_floor.stream_seq ?? -1;

const idsOf = (c: TestClient) => c.events.map((e) => e.id);

describe('batch=1: queued events in events frames', () => {
  it('drains 100 queued events in order, every id once, in frames of at most QUEUE_FRAME_EVENTS', async () => {
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(stack, ACCOUNT_A, recipient, 100);
    const c = open(edge, recipient, { batch: true });
    await waitUntil('all 100 events', () => c.events.length >= 100);
    await waitUntil('every ack', async () => (await ackFloor(recipient)) === seqs[99]);
    expect(idsOf(c)).toEqual(ids);
    expect(c.events[0]?.payload).toEqual({ n: 0 });
    expect(c.frameIds.every((f) => f.length >= 1 && f.length <= 16)).toBe(true);
    // A drain hands over many events per read: they share frames.
    expect(c.frameIds.length).toBeLessThan(100);
    for (const f of c.frames.filter((t) => t.startsWith('{"type":"events"')))
      expect(JSON.parse(f).events.length).toBeGreaterThan(1);
    await close(c);
  });

  it('comes again with what the client did not ack, and never with what it did', async () => {
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(stack, ACCOUNT_A, recipient, 20);
    const first = open(edge, recipient, { batch: true, autoAck: false });
    await waitUntil('20 events', () => first.events.length >= 20);
    expect(idsOf(first)).toEqual(ids);
    // One list ack of the first 5 ids, with one the edge never sent (ignored).
    first.ackList([...ids.slice(0, 5), randomUUID()]);
    await waitUntil('the floor at the fifth', async () => (await ackFloor(recipient)) === seqs[4]);
    await close(first);

    const second = open(edge, recipient, { batch: true });
    await waitUntil('the 15 unacked', () => second.events.length >= 15);
    await waitUntil('every ack', async () => (await ackFloor(recipient)) === seqs[19]);
    expect(idsOf(second)).toEqual(ids.slice(5));
    await close(second);
  });

  it('keeps live events one event frame each on a batch=1 socket', async () => {
    const recipient = randomUUID();
    const c = open(edge, recipient, { batch: true });
    await c.opened;
    const id = randomUUID();
    // Retried until the socket is attached: every copy that reached it is one event frame.
    await waitUntil('the live event sent', async () => {
      const reply = await sendLive(stack.nc, ACCOUNT_A, recipient, '{"live":1}', id);
      return reply.sockets > 0;
    });
    await waitUntil('the live event', () => c.events.length >= 1);
    expect(c.frames.every((f) => f.startsWith('{"type":"event","id":'))).toBe(true);
    expect(c.events[0]?.id).toBe(id);
    await close(c);
  });

  it('leaves sockets without batch=1 as they were: one event frame per queued event, byte for byte', async () => {
    const recipient = randomUUID();
    const { ids } = await queueMany(stack, ACCOUNT_A, recipient, 30);
    const c = open(edge, recipient);
    await waitUntil('30 events', () => c.events.length >= 30);
    expect(idsOf(c)).toEqual(ids);
    expect(c.frames).toHaveLength(30);
    c.events.forEach((e, n) => {
      expect(c.frames[n]).toBe(encodeEventFrame(e.id, e.ts, `{"n":${n}}`));
    });
    await close(c);
  });

  it('gives a device (device=) on batch=1 every queued event, and the unacked ones again', async () => {
    // A device's catch-up reads the stream one event per request, so its frames may carry one
    // event each; what the drain hands it in one read shares a frame, as on any batch=1 socket.
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(stack, ACCOUNT_A, recipient, 40);
    const first = open(edge, recipient, { device: 'phone', batch: true, autoAck: false });
    await waitUntil('40 events', () => first.events.length >= 40);
    expect(idsOf(first)).toEqual(ids);
    first.ackList(ids.slice(0, 10));
    await waitUntil(
      'the phone position',
      async () => (await positions.read(ACCOUNT_A, recipient, 'phone'))?.seq === seqs[9],
    );
    await close(first);

    const again = open(edge, recipient, { device: 'phone', batch: true });
    const sentinel = randomUUID();
    await waitUntil('the 30 unacked', () => again.events.length >= 30);
    await queueEvent(stack, ACCOUNT_A, recipient, '{"n":999}', sentinel);
    await waitUntil('the sentinel', () => idsOf(again).includes(sentinel));
    expect(idsOf(again)).toEqual([...ids.slice(10), sentinel]);
    await close(again);
  });
});

describe('batch=1 frame limits', () => {
  it('sends no more ids per frame than a list ack can carry within MAX_CLIENT_FRAME_BYTES', async () => {
    // (128 - 22) / 39: 2 UUIDs, whose list ack (100 bytes) fits a 128-byte client frame.
    const small = await startEdge(stack, { MAX_CLIENT_FRAME_BYTES: '128' });
    try {
      const recipient = randomUUID();
      const { ids } = await queueMany(stack, ACCOUNT_A, recipient, 12);
      const c = open(small, recipient, { batch: true });
      await waitUntil('12 events', () => c.events.length >= 12);
      expect(idsOf(c)).toEqual(ids);
      expect(Math.max(...c.frameIds.map((f) => f.length))).toBe(2);
      expect(c.ws.readyState).toBe(c.ws.OPEN);
      await close(c);
    } finally {
      await small.close();
    }
  });

  it('keeps a frame within QUEUE_FRAME_BYTES, and sends an event larger than it alone', async () => {
    const tight = await startEdge(stack, { QUEUE_FRAME_BYTES: '1024' });
    try {
      const recipient = randomUUID();
      const ids: string[] = [];
      for (let n = 0; n < 10; n++) {
        const id = randomUUID();
        ids.push(id);
        const size = n === 5 ? 3000 : 300;
        await queueEvent(stack, ACCOUNT_A, recipient, `{"n":${n},"x":"${'x'.repeat(size)}"}`, id);
      }
      const c = open(tight, recipient, { batch: true });
      await waitUntil('10 events', () => c.events.length >= 10);
      expect(idsOf(c)).toEqual(ids);
      for (const f of c.frames) {
        if (f.startsWith('{"type":"events"'))
          expect(Buffer.byteLength(f)).toBeLessThanOrEqual(1024);
      }
      const big = c.frames.find((f) => f.includes('"n":5,'));
      expect(big?.startsWith('{"type":"event","id":')).toBe(true);
      await close(c);
    } finally {
      await tight.close();
    }
  });
});
