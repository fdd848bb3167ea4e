import { randomUUID } from 'node:crypto';
import { subjects } from '@herald/proto';
import { DevicePositions, queueStreamOf } from '@herald/queue';
import { describe, expect, it } from 'vitest';
import { QueueSource } from '../src/queue/queue-source.js';
import {
  ACCOUNT_A,
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

// A device's catch-up in runs (src/queue/queue-source.ts, src/feed/catch-up-feed.ts) against a
// real nats-server: one batched DIRECT.GET a run, a run's events written together.
const RUN = 50;

let stack: Stack;
let edge: RunningEdge;
let positions: DevicePositions;

useEdgeStack(
  (started) => {
    ({ stack, edge } = started);
    positions = new DevicePositions(stack.nc, 5000);
  },
  { DEVICE_CATCH_UP_RUN: String(RUN), QUEUE_FRAME_EVENTS: '20' },
);

function sourceOf(recipient: string, run: number, replicated = false): QueueSource {
  return new QueueSource(
    stack.nc,
    Promise.resolve(stack.jsm),
    queueStreamOf(ACCOUNT_A, recipient),
    subjects.queue(ACCOUNT_A, recipient),
    undefined,
    { run, runBytes: 1 << 20, replicated },
  );
}

/** Every event of the source after `after`, run by run: the runs' sizes and the events. */
async function readAll(source: QueueSource, after = 0) {
  const sizes: number[] = [];
  const events: { position: number; id: string }[] = [];
  let at = after;
  for (;;) {
    const run = await source.read(at, source.run);
    sizes.push(run.events.length);
    for (const e of run.events) events.push({ position: e.position, id: e.frames.event.id });
    expect(run.covered).toBe(run.events.at(-1)?.position ?? at);
    at = run.covered;
    if (!run.more) return { sizes, events };
  }
}

/** A recipient of the same partition as `recipient`: its events fall between theirs. */
function neighbourOf(recipient: string): string {
  for (;;) {
    const other = randomUUID();
    if (queueStreamOf(ACCOUNT_A, other) === queueStreamOf(ACCOUNT_A, recipient)) return other;
  }
}

function openDevice(recipient: string, device: string, opts: { autoAck?: boolean } = {}) {
  const query = new URLSearchParams({
    api_key: keys.mobileA,
    recipient,
    client: 'mobile',
    device,
    batch: '1',
  }).toString();
  return openClient(stack, edge.port, { query, v1: true, autoAck: opts.autoAck ?? true });
}

async function close(c: TestClient): Promise<void> {
  c.ws.close();
  await c.closed;
}

describe('QueueSource: runs of batched direct gets', () => {
  it('reads runs of at most its bound, in order, and says when none follows', async () => {
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(stack, ACCOUNT_A, recipient, 7);
    const source = sourceOf(recipient, 3);
    const all = await readAll(source);
    expect(all.sizes).toEqual([3, 3, 1]);
    expect(all.events).toEqual(ids.map((id, i) => ({ position: seqs[i], id })));
    // A run exactly at the bound: its EOB says none follows (Nats-Num-Pending 0), no read after.
    const exact = await readAll(sourceOf(recipient, 7));
    expect(exact.sizes).toEqual([7]);
    // From a position: only what follows it.
    const after = await readAll(source, seqs[4]);
    expect(after.events.map((e) => e.id)).toEqual(ids.slice(5));
    expect(await source.read(seqs[6] as number, 3)).toEqual({
      events: [],
      covered: seqs[6],
      more: false,
    });
  });

  it('skips gaps: other recipients between, deleted messages', async () => {
    const recipient = randomUUID();
    const other = neighbourOf(recipient);
    const ids: string[] = [];
    const seqs: number[] = [];
    for (let n = 0; n < 10; n++) {
      const id = randomUUID();
      ids.push(id);
      seqs.push(await queueEvent(stack, ACCOUNT_A, recipient, `{"n":${n}}`, id));
      await queueEvent(stack, ACCOUNT_A, other, `{"n":${n}}`);
    }
    const stream = queueStreamOf(ACCOUNT_A, recipient);
    for (const i of [0, 3, 4, 9]) await stack.jsm.streams.deleteMessage(stream, seqs[i] as number);
    const kept = [1, 2, 5, 6, 7, 8];
    for (const replicated of [false, true]) {
      const all = await readAll(sourceOf(recipient, 4, replicated));
      expect(all.events).toEqual(kept.map((i) => ({ position: seqs[i], id: ids[i] })));
    }
  });

  it('reads one by one from a stream without a direct get responder', async () => {
    const recipient = randomUUID();
    const { ids } = await queueMany(stack, ACCOUNT_A, recipient, 5);
    const stream = queueStreamOf(ACCOUNT_A, recipient);
    const info = await stack.jsm.streams.info(stream);
    await stack.jsm.streams.update(stream, { ...info.config, allow_direct: false });
    try {
      const all = await readAll(sourceOf(recipient, 2));
      expect(all.events.map((e) => e.id)).toEqual(ids);
    } finally {
      await stack.jsm.streams.update(stream, { ...info.config, allow_direct: true });
    }
  });
});

describe('a device socket caught up in runs', () => {
  it('gets a catch-up larger than a run in order, once each, in events frames', async () => {
    const recipient = randomUUID();
    const { ids } = await queueMany(stack, ACCOUNT_A, recipient, 3 * RUN + 7);
    const phone = openDevice(recipient, 'phone');
    await waitUntil('every event', () => phone.events.length >= ids.length);
    await close(phone);
    // A second device: the catch-up alone (the durable consumer was acked by the first).
    const laptop = openDevice(recipient, 'laptop');
    await waitUntil('every event', () => laptop.events.length >= ids.length);
    for (const c of [phone, laptop]) {
      expect(c.events.map((e) => e.id)).toEqual(ids);
      expect(Math.max(...c.frameIds.map((f) => f.length))).toBe(20);
    }
    // The laptop's frames are the runs' (20, 20, 10 of each run of 50), never one per event.
    expect(laptop.frameIds.length).toBeLessThanOrEqual(3 * 4 + 1);
    await close(laptop);
  });

  it('keeps order with events queued while its runs are read', async () => {
    const recipient = randomUUID();
    const first = await queueMany(stack, ACCOUNT_A, recipient, 4 * RUN);
    const phone = openDevice(recipient, 'phone');
    const more = await queueMany(stack, ACCOUNT_A, recipient, RUN, 4 * RUN);
    const ids = [...first.ids, ...more.ids];
    await waitUntil('every event', () => phone.events.length >= ids.length);
    const again = openDevice(recipient, 'tablet');
    await waitUntil('every event', () => again.events.length >= ids.length);
    await queueEvent(stack, ACCOUNT_A, recipient, '{"n":-1}', 'sentinel');
    for (const c of [phone, again]) {
      await waitUntil('the sentinel', () => c.events.some((e) => e.id === 'sentinel'));
      expect(c.events.map((e) => e.id)).toEqual([...ids, 'sentinel']);
      await close(c);
    }
  });

  it('leaves what a socket closed mid-run did not prove for its next connect', async () => {
    const recipient = randomUUID();
    const { ids, seqs } = await queueMany(stack, ACCOUNT_A, recipient, 2 * RUN);
    // A first device takes everything (and the durable consumer is acked): the tablet then has
    // only its catch-up.
    const phone = openDevice(recipient, 'phone');
    await waitUntil('every event', () => phone.events.length >= ids.length);
    await close(phone);
    const tablet = openDevice(recipient, 'tablet', { autoAck: false });
    await waitUntil('the first run', () => tablet.events.length >= RUN);
    // It proves the first run and part of the second, then goes.
    const proved = RUN + 13;
    tablet.ackList(ids.slice(0, proved));
    await close(tablet);
    await waitUntil('the position', async () => {
      const at = await positions.read(ACCOUNT_A, recipient, 'tablet');
      return at?.seq === seqs[proved - 1];
    });
    const back = openDevice(recipient, 'tablet');
    await waitUntil('the rest', () => back.events.length >= ids.length - proved);
    await queueEvent(stack, ACCOUNT_A, recipient, '{"n":-1}', 'sentinel');
    await waitUntil('the sentinel', () => back.events.some((e) => e.id === 'sentinel'));
    expect(back.events.map((e) => e.id)).toEqual([...ids.slice(proved), 'sentinel']);
    await close(back);
  });
});
