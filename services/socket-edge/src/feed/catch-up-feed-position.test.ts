import { createLogger } from '@herald/kit';
import type { DevicePositions } from '@herald/queue';
import { describe, expect, it } from 'vitest';
import type { Delivery } from '../socket/delivery.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { EventFrames } from '../socket/framing.js';
import { CatchUpFeed } from './catch-up-feed.js';
import type { FeedRun, FeedSource } from './feed-source.js';

const A = '0a0a0a0a-0000-4000-8000-00000000000a';
const R = '0b0b0b0b-0000-4000-8000-00000000000b';
const utf8 = new TextEncoder();
const frames = (id: string) => new EventFrames({ id, ts: 1, data: utf8.encode(`"${id}"`) });

/**
 * The feed's own logic over a source read by position, as the queue's is (runs of `run` events;
 * its stream reads against a real nats-server are test/e2e/devices.test.ts and
 * services/socket-edge/test/batch-frames.test.ts): a socket that records writes, a stream held
 * in memory, a position store that records.
 */
function harness(opts: { recorded?: number; run?: number } = {}) {
  const stream: { seq: number; id: string }[] = [];
  const writes: { id: string; delivery: Delivery }[] = [];
  const recorded: number[] = [];
  const reads: number[] = [];
  const delivered: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  let recordGate: Promise<void> = Promise.resolve();
  const socket = {
    open: true,
    framing: 'herald.v1',
    account: A,
    recipient: R,
    hasRoomFor: () => true,
    write(f: EventFrames, delivery: Delivery) {
      writes.push({ id: f.event.id, delivery });
      return true;
    },
  } as unknown as EdgeSocket;
  const store = {
    read: async () =>
      opts.recorded === undefined ? undefined : { stream: 'S', seq: opts.recorded },
    record: async (_a: string, _r: string, _d: string, p: { seq: number }) => {
      recorded.push(p.seq);
      await recordGate;
    },
  } as unknown as DevicePositions;
  const source: FeedSource = {
    name: 'device',
    wakesOn: 'queued',
    keyedBy: 'position',
    positions: { store, stream: 'S' },
    run: opts.run ?? 1,
    async read(after: number, max: number): Promise<FeedRun> {
      reads.push(after);
      await gate;
      const events = stream
        .filter((e) => e.seq > after)
        .slice(0, max)
        .map((e) => ({ position: e.seq, frames: frames(e.id) }));
      const last = events.at(-1)?.position;
      return { events, covered: last ?? after, more: events.length === max };
    },
  };
  const feed = new CatchUpFeed(socket, 'phone', source, {
    logger: createLogger('test', 'silent'),
    status: { delivered: (_a, _r, id) => delivered.push(id) },
    limitChecks: (check) => check(),
    dedupeIds: 100,
    maxHeld: { events: 100, bytes: 1 << 20 },
  });
  const hold = () => {
    let open = () => {};
    gate = new Promise<void>((r) => {
      open = r;
    });
    return open;
  };
  /** Records answer only once the returned function is called. */
  const holdRecords = () => {
    let open = () => {};
    recordGate = new Promise<void>((r) => {
      open = r;
    });
    return open;
  };
  return { feed, stream, writes, recorded, reads, delivered, hold, holdRecords };
}

function delivery(log: string[], name: string, live = false): Delivery {
  return {
    live,
    written: () => log.push(`${name} written`),
    proven: () => log.push(`${name} proven`),
    lost: () => log.push(`${name} lost`),
    overdue: () => {},
  };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

async function waitFor(predicate: () => boolean): Promise<void> {
  for (let n = 0; n < 200 && !predicate(); n++) await tick();
  expect(predicate()).toBe(true);
}

describe('CatchUpFeed over a source read by position (the queue)', () => {
  it('writes the stored events in order, a drained copy ahead of the catch-up in its turn, each once', async () => {
    const h = harness();
    h.stream.push({ seq: 3, id: 'e3' }, { seq: 5, id: 'e5' }, { seq: 8, id: 'e8' });
    const open = h.hold();
    void h.feed.start();
    const log: string[] = [];
    // The drain hands e8 while the catch-up has not read anything yet: it waits for its turn.
    expect(h.feed.offer(8, frames('e8'), delivery(log, 'drained e8'))).toBe(true);
    await tick();
    expect(h.writes).toEqual([]);
    open();
    await waitFor(() => h.writes.length === 3);
    expect(h.writes.map((w) => w.id)).toEqual(['e3', 'e5', 'e8']);
    // A copy of what the catch-up wrote follows that write.
    expect(h.feed.offer(5, frames('e5'), delivery(log, 'drained e5'))).toBe(true);
    h.writes[1]?.delivery.proven();
    h.writes[2]?.delivery.proven();
    expect(log).toEqual(['drained e5 proven', 'drained e8 proven']);
    expect(h.writes).toHaveLength(3);
  });

  it('proves at once, without a write, a drained copy at or below the recorded position', async () => {
    const h = harness({ recorded: 5 });
    h.stream.push({ seq: 5, id: 'e5' }, { seq: 6, id: 'e6' });
    const log: string[] = [];
    // Handed before the position was read: proven once it is.
    expect(h.feed.offer(4, frames('e4'), delivery(log, 'early e4'))).toBe(true);
    await h.feed.start();
    await waitFor(() => h.writes.length === 1);
    expect(h.writes.map((w) => w.id)).toEqual(['e6']);
    expect(h.reads[0]).toBe(5);
    expect(h.feed.offer(5, frames('e5'), delivery(log, 'drained e5'))).toBe(true);
    await tick();
    expect(log).toEqual([
      'early e4 written',
      'early e4 proven',
      'drained e5 written',
      'drained e5 proven',
    ]);
    expect(h.writes).toHaveLength(1);
  });

  it('writes live events straight to the socket: they are not the source’s', async () => {
    const h = harness();
    const open = h.hold();
    void h.feed.start();
    const log: string[] = [];
    expect(h.feed.take(frames('live1'), delivery(log, 'live1', true))).toBe(true);
    expect(h.feed.take(frames('live1'), delivery(log, 'live1 again', true))).toBe(true);
    expect(h.writes.map((w) => w.id)).toEqual(['live1', 'live1']);
    open();
  });

  it('reads on at a queued notice, not at an unread one, and records the floor over proven events', async () => {
    const h = harness();
    h.stream.push({ seq: 2, id: 'e2' });
    void h.feed.start();
    await waitFor(() => h.writes.length === 1);
    await tick();
    h.stream.push({ seq: 4, id: 'e4' });
    h.feed.kick('unread');
    await tick();
    expect(h.writes).toHaveLength(1);
    h.feed.kick('queued');
    await waitFor(() => h.writes.length === 2);
    h.writes[1]?.delivery.proven();
    await h.feed.stop();
    // e2 unproven: the floor stays below it.
    expect(h.recorded).toEqual([]);
    const again = harness();
    again.stream.push({ seq: 2, id: 'e2' }, { seq: 4, id: 'e4' });
    void again.feed.start();
    await waitFor(() => again.writes.length === 2);
    for (const w of again.writes) w.delivery.proven();
    await again.feed.stop();
    expect(again.recorded.at(-1)).toBe(4);
  });

  it('covers at the close a drained copy proven before its notice moved the catch-up over it', async () => {
    // The drain writes e2 once the catch-up is done (its position is past what that read); the
    // device proves it and goes before the queued notice's read: the close reads on and records 2.
    const h = harness();
    h.stream.push({ seq: 1, id: 'e1' });
    void h.feed.start();
    await waitFor(() => h.writes.length === 1);
    await tick();
    h.stream.push({ seq: 2, id: 'e2' });
    expect(h.feed.offer(2, frames('e2'), delivery([], 'drained e2'))).toBe(true);
    for (const w of h.writes) w.delivery.proven();
    await h.feed.stop();
    expect(h.writes.map((w) => w.id)).toEqual(['e1', 'e2']);
    expect(h.recorded.at(-1)).toBe(2);
  });

  it('tells the held copies they are lost when the socket goes mid catch-up', async () => {
    const h = harness();
    h.stream.push({ seq: 1, id: 'e1' });
    const open = h.hold();
    void h.feed.start();
    const log: string[] = [];
    h.feed.offer(9, frames('e9'), delivery(log, 'e9'));
    await h.feed.stop();
    open();
    await tick();
    expect(log).toEqual(['e9 lost']);
    expect(h.writes).toEqual([]);
  });

  it('records the position once per proven run, and sends its delivered records together', async () => {
    const h = harness({ run: 3 });
    for (let seq = 1; seq <= 7; seq++) h.stream.push({ seq, id: `e${seq}` });
    void h.feed.start();
    await waitFor(() => h.writes.length === 7);
    // Runs of 3, 3 and 1 (short: the last), each one read.
    expect(h.reads).toEqual([0, 3, 6]);
    const prove = (n: number) => h.writes[n - 1]?.delivery.proven('phone');
    prove(1);
    prove(2);
    await tick();
    expect(h.recorded).toEqual([]);
    expect(h.delivered).toEqual([]);
    prove(3);
    await waitFor(() => h.recorded.length === 1);
    expect(h.recorded).toEqual([3]);
    expect(h.delivered).toEqual(['e1', 'e2', 'e3']);
    // Proven out of order: the floor waits for e4, then passes the second run's end.
    prove(5);
    prove(6);
    await tick();
    expect(h.recorded).toEqual([3]);
    prove(4);
    await waitFor(() => h.recorded.length === 2);
    expect(h.recorded).toEqual([3, 6]);
    expect(h.delivered).toEqual(['e1', 'e2', 'e3', 'e5', 'e6', 'e4']);
    prove(7);
    await waitFor(() => h.recorded.length === 3);
    await h.feed.stop();
    // The close records nothing more: the floor was recorded with the last run.
    expect(h.recorded).toEqual([3, 6, 7]);
  });

  it('records runs proven while a record is on its way in one write after it', async () => {
    const h = harness({ run: 2 });
    for (let seq = 1; seq <= 6; seq++) h.stream.push({ seq, id: `e${seq}` });
    void h.feed.start();
    await waitFor(() => h.writes.length === 6);
    const answer = h.holdRecords();
    h.writes[0]?.delivery.proven('phone');
    h.writes[1]?.delivery.proven('phone');
    await waitFor(() => h.recorded.length === 1);
    // Two more runs proven while the first run's record waits for its answer.
    for (const w of h.writes.slice(2)) w.delivery.proven('phone');
    await tick();
    expect(h.recorded).toEqual([2]);
    answer();
    await waitFor(() => h.recorded.length === 2);
    await h.feed.stop();
    expect(h.recorded).toEqual([2, 6]);
    expect(h.delivered).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
  });
});
