import type { HeraldEvent } from '@herald/sdk';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { accept, KEY, settle, setup, uuid } from './helpers.js';

describe('herald.v1 events, acks and dedup (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('offers herald.v1 on {wsUrl}/ws/connect with api_key, lower-case recipient, client, batch=1 and device', async () => {
    const { herald, last } = setup({ wsUrl: 'wss://edge.test/base/' });
    const r = uuid();
    herald.subscribe(r.toUpperCase());
    await settle();
    const url = new URL(last().url);
    expect(url.origin + url.pathname).toBe('wss://edge.test/base/ws/connect');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      api_key: KEY,
      recipient: r,
      client: 'web',
      batch: '1',
      device: expect.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
    });
    expect(last().protocols).toBe('herald.v1');
    herald.disconnect();
  });

  it('gives listeners the payload as sent and the envelope, then acks', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe<{ title: string; n: number[] }>(uuid());
    const seen: Array<[unknown, HeraldEvent]> = [];
    const acksSeenByListener: string[][] = [];
    sub.listen((payload, event) => {
      expectTypeOf(payload).toEqualTypeOf<{ title: string; n: number[] }>();
      acksSeenByListener.push(last().acks());
      seen.push([payload, event]);
    });
    await settle();
    await accept(last());
    last().event('id-1', { title: 'hi', n: [1, 2] }, 1234);
    expect(seen).toEqual([
      [
        { title: 'hi', n: [1, 2] },
        { id: 'id-1', ts: 1234, payload: { title: 'hi', n: [1, 2] } },
      ],
    ]);
    expect(acksSeenByListener, 'the ack goes out after the listener ran').toEqual([[]]);
    expect(last().acks()).toEqual(['id-1']);
    expect(last().sent).toEqual(['{"type":"ack","id":"id-1"}']);
    herald.disconnect();
  });

  it("passes a topic copy's topic through, in an event and in an events frame", async () => {
    const { herald, last } = setup();
    const seen: HeraldEvent[] = [];
    herald.subscribe(uuid()).listen((_payload, event) => seen.push(event));
    await settle();
    await accept(last());
    const copy = { id: 'c-1', ts: 1, topic: 'project:1.followers', payload: { n: 1 } };
    last().raw(JSON.stringify({ type: 'event', ...copy }));
    last().raw(
      JSON.stringify({
        type: 'events',
        events: [
          { id: 'c-2', ts: 2, topic: 'team', payload: 2 },
          { id: 'd-1', ts: 3, payload: 3 },
          { id: 'd-2', ts: 4, topic: 7, payload: 4 },
        ],
      }),
    );
    expect(seen).toStrictEqual([
      copy,
      { id: 'c-2', ts: 2, topic: 'team', payload: 2 },
      // A direct event has no topic, and a topic that is not a string is not one.
      { id: 'd-1', ts: 3, payload: 3 },
      { id: 'd-2', ts: 4, payload: 4 },
    ]);
    expect(last().acks()).toEqual(['c-1', 'c-2', 'd-1', 'd-2']);
    herald.disconnect();
  });

  it('drops a duplicate id but acks it again, on the same socket and after a reconnect', async () => {
    const { herald, sockets, last } = setup();
    const seen: string[] = [];
    herald.subscribe(uuid()).listen((_p, e) => seen.push(e.id));
    await settle();
    await accept(last());
    last().event('a', 1);
    last().event('a', 1);
    last().event('b', 2);
    expect(last().acks()).toEqual(['a', 'a', 'b']);
    last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(50);
    expect(sockets).toHaveLength(2);
    await accept(last());
    last().event('b', 2);
    last().event('c', 3);
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(last().acks()).toEqual(['b', 'c']);
    herald.disconnect();
  });

  it('remembers exactly dedupCapacity ids: the oldest is forgotten at capacity + 1', async () => {
    const { herald, last } = setup({ dedupCapacity: 3 });
    const seen: string[] = [];
    herald.subscribe(uuid()).listen((_p, e) => seen.push(e.id));
    await settle();
    await accept(last());
    for (const id of ['1', '2', '3', '1']) last().event(id, null);
    expect(seen, 'three ids held: 1 is still a duplicate').toEqual(['1', '2', '3']);
    last().event('4', null);
    last().event('2', null);
    expect(seen, '4 pushed 1 out; 2 is still held').toEqual(['1', '2', '3', '4']);
    last().event('1', null);
    expect(seen).toEqual(['1', '2', '3', '4', '1']);
    herald.disconnect();
  });

  it('keeps calling listeners and acks when one throws, and reports the error to the logger', async () => {
    const logger = { error: vi.fn(), warn: vi.fn(), debug: vi.fn() };
    const { herald, last } = setup({ logger });
    const sub = herald.subscribe(uuid());
    const seen: string[] = [];
    sub.listen(() => {
      throw new Error('app bug');
    });
    sub.listen((p) => seen.push(String(p)));
    await settle();
    await accept(last());
    last().event('x', 'ok');
    expect(seen).toEqual(['ok']);
    expect(last().acks()).toEqual(['x']);
    expect(logger.error).toHaveBeenCalledWith('herald: a listener threw', {
      error: new Error('app bug'),
    });
    herald.disconnect();
  });

  it('skips frames that are not herald.v1 envelopes', async () => {
    const logger = { warn: vi.fn() };
    const { herald, last } = setup({ logger });
    const seen: unknown[] = [];
    herald.subscribe(uuid()).listen((p) => seen.push(p));
    await settle();
    await accept(last());
    for (const bad of [
      'not json',
      '{"type":"event","id":7,"ts":1}',
      '{"type":"hello"}',
      'null',
      new Uint8Array([1]),
    ]) {
      last().raw(bad);
    }
    last().event('ok', 'fine');
    expect(seen).toEqual(['fine']);
    expect(last().acks()).toEqual(['ok']);
    expect(logger.warn).toHaveBeenCalledTimes(5);
    herald.disconnect();
  });

  it('never logs the API key or a payload', async () => {
    const lines: unknown[] = [];
    const log = (...args: unknown[]) => lines.push(args);
    const { herald, last } = setup({ logger: { debug: log, warn: log, error: log } });
    const sub = herald.subscribe(uuid());
    sub.listen(() => {
      throw new Error('listener failure');
    });
    await settle();
    await accept(last());
    last().event('e', { secret: 'payload-contents' });
    last().raw('garbage');
    last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(50);
    last().refuse(4401, 'invalid_api_key');
    herald.disconnect();
    const text = JSON.stringify(lines);
    expect(lines.length).toBeGreaterThan(4);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('payload-contents');
  });

  it('acks an event whose listener unsubscribed, then closes the socket', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    sub.listen(() => sub.unsubscribe());
    await settle();
    await accept(last());
    const sock = last();
    sock.event('x', 1);
    expect(sock.acks()).toEqual(['x']);
    expect(sock.closedWith).toBe(1000);
  });
});
