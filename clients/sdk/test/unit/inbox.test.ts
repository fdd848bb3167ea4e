import { HeraldError, type HistoryPage } from '@herald/sdk';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import type { FakeSocket } from './fake-websocket.js';
import { accept, settle, setup, uuid } from './helpers.js';

const inbox = (sock: FakeSocket, unread: number, ref?: string) =>
  sock.raw(JSON.stringify({ type: 'inbox', unread, ref }));
const page = (sock: FakeSocket, events: unknown[], next: string | null, ref?: string) =>
  sock.raw(JSON.stringify({ type: 'history', events, next, ref }));
const refuse = (sock: FakeSocket, code: string, ref?: string) =>
  sock.raw(JSON.stringify({ type: 'error', error: { code, message: code, field: 'type' }, ref }));
const sentFrames = (sock: FakeSocket) =>
  sock.sent.map((s) => JSON.parse(s)).filter((f) => f.type !== 'ack');

describe('inbox mode over herald.v1 (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('hands every inbox frame to onInbox and keeps the last count; the first one accepts the socket', async () => {
    const { herald, last } = setup({ acceptDelayMs: 60_000 });
    const sub = herald.subscribe(uuid());
    const counts: number[] = [];
    sub.onInbox((n) => counts.push(n));
    await settle();
    last().open();
    await settle();
    expect(sub.unread(), 'no count before the server sent one').toBeUndefined();
    expect(sub.connected()).toBe(false);
    const atConnect: Array<number | undefined> = [];
    sub.onConnectionChange(() => atConnect.push(sub.unread()));
    inbox(last(), 3);
    expect(sub.connected(), 'an inbox frame proves the socket was accepted').toBe(true);
    expect(atConnect, "the count is known when 'connected' is told").toEqual([3]);
    inbox(last(), 0);
    expect(counts).toEqual([3, 0]);
    expect(sub.unread()).toBe(0);
    herald.disconnect();
  });

  it('sends read marks by id and all, each answered by the count after it', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    await settle();
    await accept(last());
    inbox(last(), 3);
    const some = sub.markRead(['a', 'b']);
    const all = sub.markAllRead();
    expect(sentFrames(last()), 'one request at a time, each with its ref').toEqual([
      { type: 'read', ids: ['a', 'b'], ref: 'r1' },
    ]);
    inbox(last(), 1, 'r1');
    await expect(some).resolves.toBe(1);
    expect(sentFrames(last()).at(-1)).toEqual({ type: 'read', all: true, ref: 'r2' });
    inbox(last(), 0, 'r2');
    await expect(all).resolves.toBe(0);
    await expect(sub.markRead([])).rejects.toThrow(TypeError);
    const many = Array.from({ length: 101 }, (_, i) => `e${i}`);
    await expect(sub.markRead(many)).rejects.toThrow(/1-100/);
    await expect(sub.markRead(['x'.repeat(65)])).rejects.toThrow(TypeError);
    expect(sentFrames(last())).toHaveLength(2);
    const hundred = sub.markRead(many.slice(0, 100));
    expect(sentFrames(last()).at(-1)).toMatchObject({ type: 'read' });
    last().serverClose(1006);
    await expect(hundred).rejects.toMatchObject({ code: 'not_connected' });
    await expect(sub.markAllRead(), 'the socket is gone').rejects.toMatchObject({
      code: 'not_connected',
    });
    herald.disconnect();
  });

  it("a plain key's edge refuses reads and history in-band: inbox_disabled, socket kept", async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    await settle();
    await accept(last());
    const read = sub.markAllRead();
    refuse(last(), 'inbox_disabled', 'r1');
    await expect(read).rejects.toMatchObject({ code: 'inbox_disabled', kind: 'refused' });
    expect(sub.connected()).toBe(true);
    expect(sub.unread()).toBeUndefined();
    herald.disconnect();
  });

  it("tells a read's answer from other devices' counts by its ref; rate_limited rejects", async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    const counts: number[] = [];
    sub.onInbox((n) => counts.push(n));
    await settle();
    await accept(last());
    inbox(last(), 2);
    const read = sub.markAllRead();
    const history = sub.history();
    let settled = false;
    read.then(() => (settled = true));
    inbox(last(), 3); // another device's change, no ref: news, not the answer
    refuse(last(), 'unavailable'); // no ref: not an answer either
    inbox(last(), 9, 'r7'); // a ref no request waits on
    await settle();
    expect(settled).toBe(false);
    expect(sentFrames(last())).toEqual([{ type: 'read', all: true, ref: 'r1' }]);
    inbox(last(), 0, 'r1');
    await expect(read).resolves.toBe(0);
    expect(counts, 'every count reaches onInbox').toEqual([2, 3, 9, 0]);
    expect(sentFrames(last()).at(-1)).toEqual({
      type: 'history',
      before: null,
      limit: 20,
      ref: 'r2',
    });
    refuse(last(), 'rate_limited', 'r2');
    await expect(history).rejects.toMatchObject({ code: 'rate_limited', field: 'type' });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sentFrames(last()), 'not sent again: the caller decides').toHaveLength(2);
    const next = sub.history({ limit: 1 });
    page(last(), [], null, 'r3');
    await expect(next).resolves.toEqual({ events: [], next: null });
    herald.disconnect();
  });

  it('asks for history one request at a time and answers each in order', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe<{ t: string }>(uuid());
    await settle();
    await accept(last());
    inbox(last(), 1);
    const first = sub.history({ limit: 2 });
    const second = sub.history({ before: '41', limit: 100 });
    expectTypeOf(first).toEqualTypeOf<Promise<HistoryPage<{ t: string }>>>();
    expect(sentFrames(last()), 'the second waits for the first answer').toEqual([
      { type: 'history', before: null, limit: 2, ref: 'r1' },
    ]);
    const newest = [
      { id: 'b', ts: 2, payload: { t: 'b' }, read: false },
      { id: 'a', ts: 1, payload: { t: 'a' }, read: true },
    ];
    page(last(), newest, '41', 'r1');
    await expect(first).resolves.toEqual({ events: newest, next: '41' });
    expect(sentFrames(last()).at(-1)).toEqual({
      type: 'history',
      before: '41',
      limit: 100,
      ref: 'r2',
    });
    page(last(), [], null, 'r2');
    await expect(second).resolves.toEqual({ events: [], next: null });
    const third = sub.history();
    expect(sentFrames(last()).at(-1), 'default: the newest 20').toEqual({
      type: 'history',
      before: null,
      limit: 20,
      ref: 'r3',
    });
    herald.disconnect();
    await expect(third).rejects.toMatchObject({ code: 'not_connected' });
  });

  it('takes an error frame as the waiting request refused, keeps the socket and goes on', async () => {
    const { herald, last, sockets } = setup();
    const sub = herald.subscribe(uuid());
    const errors: HeraldError[] = [];
    sub.onError((e) => errors.push(e));
    await settle();
    await accept(last());
    const refused = sub.history();
    const next = sub.history();
    refuse(last(), 'inbox_disabled', 'r1');
    await expect(refused).rejects.toMatchObject({ code: 'inbox_disabled', field: 'type' });
    expect(sentFrames(last())).toHaveLength(2);
    page(last(), [], null, 'r2');
    await expect(next).resolves.toEqual({ events: [], next: null });
    expect(sub.connected()).toBe(true);
    expect(sockets).toHaveLength(1);
    // The error frame was a request's answer, not a refusal: a later network close says nothing of it.
    last().serverClose(1006);
    expect(errors.map((e) => e.code)).not.toContain('inbox_disabled');
    herald.disconnect();
  });

  it('rejects with not_connected what waits when the socket goes, and asks made while it is down', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    await settle();
    const early = sub.history();
    await expect(early).rejects.toMatchObject({ code: 'not_connected', kind: 'network' });
    await accept(last());
    const waiting = sub.history();
    const queued = sub.history({ before: '7' });
    last().serverClose(1006);
    await expect(waiting).rejects.toBeInstanceOf(HeraldError);
    await expect(queued).rejects.toMatchObject({ code: 'not_connected' });
    await vi.advanceTimersByTimeAsync(100);
    await accept(last());
    const after = sub.history();
    sub.unsubscribe();
    await expect(after, 'closed by the last unsubscribe').rejects.toMatchObject({
      code: 'not_connected',
    });
    herald.disconnect();
  });

  it('refuses a bad cursor or limit with a TypeError, sending nothing', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    await settle();
    await accept(last());
    await expect(sub.history({ before: 'abc' })).rejects.toThrow(TypeError);
    await expect(sub.history({ limit: 0 })).rejects.toThrow(/limit: 1-100/);
    await expect(sub.history({ limit: 101 })).rejects.toThrow(TypeError);
    await expect(sub.history({ limit: 2.5 })).rejects.toThrow(TypeError);
    expect(sentFrames(last())).toEqual([]);
    herald.disconnect();
  });
});
