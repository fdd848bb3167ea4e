import type { HeraldEvent } from '@herald/sdk';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { accept, settle, setup, uuid } from './helpers.js';

// The contract: proto/src/socket.ts (EventsFrame, AckFrame), on sockets that connected with batch=1.
describe('herald.v1 events frames (batch=1) and list acks (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('hands each event to every listener in frame order, as single events, then sends one list ack', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    const seen: Array<[unknown, HeraldEvent]> = [];
    const other: string[] = [];
    const sentBeforeEach: number[] = [];
    sub.listen((payload, event) => {
      sentBeforeEach.push(last().sent.length);
      seen.push([payload, event]);
    });
    sub.listen((_p, e) => other.push(e.id));
    await settle();
    await accept(last());
    last().raw(
      JSON.stringify({
        type: 'events',
        events: [
          { id: 'a', ts: 1, payload: { title: 'one' } },
          { id: 'b', ts: 2, payload: null, extra: 'ignored' },
          { id: 'c', ts: 3, payload: [3] },
        ],
      }),
    );
    expect(seen).toEqual([
      [{ title: 'one' }, { id: 'a', ts: 1, payload: { title: 'one' } }],
      [null, { id: 'b', ts: 2, payload: null }],
      [[3], { id: 'c', ts: 3, payload: [3] }],
    ]);
    expect(other).toEqual(['a', 'b', 'c']);
    expect(sentBeforeEach, 'nothing is acked before every event was handed over').toEqual([
      0, 0, 0,
    ]);
    expect(last().sent).toEqual(['{"type":"ack","ids":["a","b","c"]}']);
    herald.disconnect();
  });

  it('keeps single event frames and their {id} ack, mixed with events frames in arrival order', async () => {
    const { herald, last } = setup();
    const seen: string[] = [];
    herald.subscribe(uuid()).listen((_p, e) => seen.push(e.id));
    await settle();
    await accept(last());
    last().event('live-1', 1);
    last().events([
      ['q1', 1],
      ['q2', 2],
    ]);
    last().event('live-2', 2);
    expect(seen).toEqual(['live-1', 'q1', 'q2', 'live-2']);
    expect(last().sent).toEqual([
      '{"type":"ack","id":"live-1"}',
      '{"type":"ack","ids":["q1","q2"]}',
      '{"type":"ack","id":"live-2"}',
    ]);
    herald.disconnect();
  });

  it('acks duplicates in a frame without handing them over again: seen before, within the frame, after a reconnect', async () => {
    const { herald, sockets, last } = setup();
    const seen: string[] = [];
    herald.subscribe(uuid()).listen((_p, e) => seen.push(e.id));
    await settle();
    await accept(last());
    last().event('a', 1);
    last().events([
      ['a', 1],
      ['b', 2],
      ['b', 2],
      ['c', 3],
    ]);
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(last().sent.at(-1)).toBe('{"type":"ack","ids":["a","b","b","c"]}');
    last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(50);
    expect(sockets).toHaveLength(2);
    await accept(last());
    last().events([
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ]);
    expect(seen, 'the redelivered b and c are dropped, d is new').toEqual(['a', 'b', 'c', 'd']);
    expect(last().sent).toEqual(['{"type":"ack","ids":["b","c","d"]}']);
    herald.disconnect();
  });

  it('a whole frame of duplicates is still acked, with every id', async () => {
    const { herald, last } = setup();
    const seen: string[] = [];
    herald.subscribe(uuid()).listen((_p, e) => seen.push(e.id));
    await settle();
    await accept(last());
    last().events([
      ['x', 1],
      ['y', 2],
    ]);
    last().events([
      ['x', 1],
      ['y', 2],
    ]);
    expect(seen).toEqual(['x', 'y']);
    expect(last().sent).toEqual([
      '{"type":"ack","ids":["x","y"]}',
      '{"type":"ack","ids":["x","y"]}',
    ]);
    herald.disconnect();
  });

  it('the largest frame the contract allows (128 events) is handed over in order and answered by one ack of 128 ids', async () => {
    const { herald, last } = setup();
    const seen: string[] = [];
    herald.subscribe(uuid()).listen((_p, e) => seen.push(e.id));
    await settle();
    await accept(last());
    const ids = Array.from({ length: 128 }, (_, i) => `e${i}`);
    last().events(ids.map((id, i) => [id, i]));
    expect(seen).toEqual(ids);
    expect(last().sent).toHaveLength(1);
    expect(JSON.parse(last().sent[0] ?? '')).toEqual({ type: 'ack', ids });
    herald.disconnect();
  });

  it('a listener that throws stops neither the other events of the frame nor the ack', async () => {
    const logger = { error: vi.fn() };
    const { herald, last } = setup({ logger });
    const seen: string[] = [];
    herald.subscribe(uuid()).listen((_p, e) => {
      seen.push(e.id);
      if (e.id === 'b') throw new Error('app bug');
    });
    await settle();
    await accept(last());
    last().events([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(last().acks()).toEqual(['a', 'b', 'c']);
    expect(logger.error).toHaveBeenCalledTimes(1);
    herald.disconnect();
  });

  it('a listener that unsubscribes mid-frame: what was handed over is acked, the rest stays queued, then the socket closes', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    const seen: string[] = [];
    sub.listen((_p, e) => {
      seen.push(e.id);
      if (e.id === 'b') sub.unsubscribe();
    });
    await settle();
    await accept(last());
    const sock = last();
    sock.events([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    expect(seen).toEqual(['a', 'b']);
    expect(sock.sent).toEqual(['{"type":"ack","ids":["a","b"]}']);
    expect(sock.closedWith).toBe(1000);
  });

  it('an events frame proves the socket accepted at once, as an event frame does', async () => {
    const { herald, last } = setup({ acceptDelayMs: 10_000 });
    const states: string[] = [];
    herald.onConnectionChange((s) => states.push(s));
    herald.subscribe(uuid()).listen(() => {});
    await settle();
    last().open();
    await settle();
    expect(states).toEqual([]);
    last().events([['a', 1]]);
    expect(states).toEqual(['connected']);
    herald.disconnect();
  });

  it('skips an events frame that is not all well-formed events, acking nothing of it', async () => {
    const logger = { warn: vi.fn() };
    const { herald, last } = setup({ logger });
    const seen: string[] = [];
    herald.subscribe(uuid()).listen((_p, e) => seen.push(e.id));
    await settle();
    await accept(last());
    const ok = { id: 'ok', ts: 1, payload: 1 };
    const bad = [
      { type: 'events', events: [] },
      { type: 'events' },
      { type: 'events', events: { 0: ok } },
      { type: 'events', events: [ok, { ts: 2, payload: 2 }] },
      { type: 'events', events: [ok, { id: '', ts: 2 }] },
      { type: 'events', events: [ok, { id: 'n', ts: '2' }] },
      { type: 'events', events: [ok, null] },
      { type: 'events', events: [ok, 'e'] },
    ];
    for (const frame of bad) last().raw(JSON.stringify(frame));
    expect(seen).toEqual([]);
    expect(last().sent).toEqual([]);
    expect(logger.warn).toHaveBeenCalledTimes(bad.length);
    last().events([['fine', 1]]);
    expect(seen).toEqual(['fine']);
    expect(last().acks()).toEqual(['fine']);
    herald.disconnect();
  });
});
