import { createLogger } from '@herald/kit';
import type { InboxCatchUpEvent } from '@herald/proto';
import type { DevicePositions } from '@herald/queue';
import { describe, expect, it } from 'vitest';
import { InboxSource } from '../inbox/inbox-source.js';
import type { Delivery } from '../socket/delivery.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { EventFrames } from '../socket/framing.js';
import { CatchUpFeed } from './catch-up-feed.js';

const A = '0a0a0a0a-0000-4000-8000-00000000000a';
const R = '0b0b0b0b-0000-4000-8000-00000000000b';
const utf8 = new TextEncoder();

/**
 * The feed's own logic over the inbox source (order, one write per id, the position over
 * contiguous proofs) against a socket that records writes and a store list held in memory; the
 * same feed against the real store and sockets is test/e2e/inbox-sockets.test.ts.
 */
function harness(opts: { maxHeld?: number; dedupeIds?: number; room?: () => boolean } = {}) {
  const stored: InboxCatchUpEvent[] = [];
  const writes: { id: string; delivery: Delivery }[] = [];
  const recorded: number[] = [];
  let gate: Promise<void> = Promise.resolve();
  const socket = {
    open: true,
    framing: 'herald.v1',
    account: A,
    recipient: R,
    hasRoomFor: () => opts.room?.() ?? true,
    write(frames: EventFrames, delivery: Delivery) {
      writes.push({ id: frames.event.id, delivery });
      return true;
    },
  } as unknown as EdgeSocket;
  const positions = {
    read: async () => undefined,
    record: async (_a: string, _r: string, _d: string, p: { seq: number }) => {
      recorded.push(p.seq);
    },
  } as unknown as DevicePositions;
  const inbox = {
    after: async (_a: string, _r: string, after: number, limit: number) => {
      // A read answers with the store as it was when asked (its query runs then).
      const seen = stored.slice();
      await gate;
      return seen.filter((e) => e.seq > after).slice(0, limit);
    },
  };
  const source = new InboxSource(inbox, { account: A, recipient: R }, positions, 2);
  const feed = new CatchUpFeed(socket, 'phone', source, {
    logger: createLogger('test', 'silent'),
    status: { delivered: () => {} },
    limitChecks: (check) => check(),
    dedupeIds: opts.dedupeIds ?? 100,
    maxHeld: { events: opts.maxHeld ?? 100, bytes: 1 << 20 },
  });
  const store = (id: string) => {
    stored.push({ seq: stored.length + 1, id, ts: 1, payload_json: `"${id}"` });
  };
  const hold = () => {
    let open = () => {};
    gate = new Promise<void>((r) => {
      open = r;
    });
    return open;
  };
  return { feed, store, writes, recorded, hold, socket };
}

function delivery(log: string[], name: string, live = true): Delivery {
  return {
    live,
    written: () => log.push(`${name} written`),
    proven: () => log.push(`${name} proven`),
    lost: () => log.push(`${name} lost`),
    overdue: () => {},
  };
}

const frames = (id: string) => new EventFrames({ id, ts: 1, data: utf8.encode(`"${id}"`) });
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('CatchUpFeed over the inbox', () => {
  it('writes the stored events in order, holding a live one that arrives meanwhile for its turn', async () => {
    const h = harness();
    for (const id of ['e1', 'e2', 'e3']) h.store(id);
    const open = h.hold();
    void h.feed.start();
    const log: string[] = [];
    // e3 arrives live while the catch-up's first request is out: held, not written ahead of e1.
    expect(h.feed.take(frames('e3'), delivery(log, 'live e3'))).toBe(true);
    await tick();
    expect(h.writes).toEqual([]);
    open();
    await waitFor(() => h.writes.length === 3);
    expect(h.writes.map((w) => w.id)).toEqual(['e1', 'e2', 'e3']);
    // The live delivery follows the one write of e3.
    h.writes[2]?.delivery.written();
    h.writes[2]?.delivery.proven();
    expect(log).toEqual(['live e3 written', 'live e3 proven']);
  });

  it('never writes an id twice in a session: a copy follows the first write, or is proven at once', async () => {
    const h = harness();
    h.store('e1');
    void h.feed.start();
    await waitFor(() => h.writes.length === 1);
    const log: string[] = [];
    expect(h.feed.offer(7, frames('e1'), delivery(log, 'drained e1', false))).toBe(true);
    h.writes[0]?.delivery.written();
    h.writes[0]?.delivery.proven();
    expect(log).toEqual(['drained e1 written', 'drained e1 proven']);
    expect(h.feed.take(frames('e1'), delivery(log, 'live e1'))).toBe(true);
    await tick();
    expect(log.slice(2)).toEqual(['live e1 written', 'live e1 proven']);
    expect(h.writes).toHaveLength(1);
  });

  it('records the position over the leading proven run only, never past an unproven event', async () => {
    const h = harness();
    for (const id of ['e1', 'e2', 'e3', 'e4']) h.store(id);
    void h.feed.start();
    await waitFor(() => h.writes.length === 4);
    for (const n of [0, 1, 3]) h.writes[n]?.delivery.proven();
    await h.feed.stop();
    expect(h.recorded.at(-1)).toBe(2);
  });

  it('moves the position over live events the catch-up finds proven', async () => {
    const h = harness();
    void h.feed.start();
    await tick();
    await tick();
    h.store('live1');
    h.feed.take(frames('live1'), delivery([], 'live1'));
    h.writes[0]?.delivery.proven();
    h.feed.kick(); // the unread notice of the store's change
    await tick();
    await h.feed.stop();
    expect(h.writes.map((w) => w.id)).toEqual(['live1']);
    expect(h.recorded.at(-1)).toBe(1);
  });

  it('covers at the close what was proven live before the notice of its store came', async () => {
    const h = harness();
    void h.feed.start();
    await waitFor(() => true);
    await tick();
    h.store('live1');
    h.feed.take(frames('live1'), delivery([], 'live1'));
    h.writes[0]?.delivery.proven();
    await h.feed.stop();
    expect(h.recorded.at(-1)).toBe(1);
  });

  it('covers at the close a live event proven while the read its notice started was still out', async () => {
    const h = harness();
    void h.feed.start();
    await waitFor(() => true);
    await tick();
    h.store('live1');
    h.feed.take(frames('live1'), delivery([], 'live1'));
    h.writes[0]?.delivery.proven();
    const open = h.hold();
    h.feed.kick(); // the unread notice: its read is out when the socket goes, and its run dropped
    await tick();
    const stopped = h.feed.stop();
    open();
    await stopped;
    expect(h.recorded.at(-1)).toBe(1);
  });

  it('covers at the close a live event held through a connect read that ran before its store', async () => {
    // The connect's read is answered empty (asked before the store kept the event); the live push
    // comes meanwhile and is held, then written when that catch-up ends. The unread notice of the
    // store's change comes only after the socket went (the store counts before it publishes).
    const h = harness();
    const open = h.hold();
    void h.feed.start();
    await tick();
    h.store('live1');
    expect(h.feed.take(frames('live1'), delivery([], 'live1'))).toBe(true);
    open();
    await waitFor(() => h.writes.length === 1);
    h.writes[0]?.delivery.proven();
    await h.feed.stop();
    expect(h.recorded.at(-1)).toBe(1);
  });

  it('writes a live event at once once the connect catch-up is done, and reads on without a copy', async () => {
    const h = harness();
    h.store('e1');
    void h.feed.start();
    await waitFor(() => h.writes.length === 1);
    await tick();
    h.store('live2');
    const open = h.hold();
    h.feed.kick(); // the store's notice: a read-on is out when the live push comes
    expect(h.feed.take(frames('live2'), delivery([], 'live2'))).toBe(true);
    expect(h.writes.map((w) => w.id)).toEqual(['e1', 'live2']);
    open();
    await tick();
    await tick();
    expect(h.writes).toHaveLength(2);
  });

  it('remembers INBOX_DEDUPE_IDS proven ids: the oldest beyond them is forgotten', async () => {
    const h = harness({ dedupeIds: 2 });
    void h.feed.start();
    await waitFor(() => true);
    await tick();
    for (const id of ['a', 'b']) h.feed.take(frames(id), delivery([], id));
    for (const w of h.writes) w.delivery.proven();
    // Two remembered: a copy of either is not written again.
    h.feed.take(frames('a'), delivery([], 'a again'));
    expect(h.writes).toHaveLength(2);
    h.feed.take(frames('c'), delivery([], 'c'));
    h.writes[2]?.delivery.proven();
    h.feed.take(frames('d'), delivery([], 'd'));
    // c and d are the two kept; a, the oldest proven, was forgotten and is written again.
    h.feed.take(frames('a'), delivery([], 'a late'));
    expect(h.writes.map((w) => w.id)).toEqual(['a', 'b', 'c', 'd', 'a']);
  });

  it('holds no more than its cap during a catch-up: past it an event is not taken', async () => {
    const h = harness({ maxHeld: 2 });
    const open = h.hold();
    void h.feed.start();
    expect(h.feed.take(frames('a'), delivery([], 'a'))).toBe(true);
    expect(h.feed.take(frames('b'), delivery([], 'b'))).toBe(true);
    expect(h.feed.take(frames('c'), delivery([], 'c'))).toBe(false);
    open();
    await waitFor(() => h.writes.length === 2);
    expect(h.feed.take(frames('c'), delivery([], 'c'))).toBe(true);
    expect(h.writes.map((w) => w.id)).toEqual(['a', 'b', 'c']);
  });

  it('tells the held deliveries they are lost when the socket goes mid catch-up', async () => {
    const h = harness();
    const open = h.hold();
    void h.feed.start();
    const log: string[] = [];
    h.feed.take(frames('x'), delivery(log, 'x'));
    await h.feed.stop();
    open();
    expect(log).toEqual(['x lost']);
    expect(h.writes).toEqual([]);
  });
});

async function waitFor(predicate: () => boolean): Promise<void> {
  for (let n = 0; n < 200 && !predicate(); n++) await tick();
  expect(predicate()).toBe(true);
}
