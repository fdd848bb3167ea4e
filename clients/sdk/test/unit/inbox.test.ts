import { HeraldError, type HistoryPage } from '@herald/sdk';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import type { FakeSocket } from './fake-websocket.js';
import { accept, settle, setup, uuid } from './helpers.js';

const inbox = (sock: FakeSocket, unread: number) =>
  sock.raw(JSON.stringify({ type: 'inbox', unread }));
const page = (sock: FakeSocket, events: unknown[], next: string | null) =>
  sock.raw(JSON.stringify({ type: 'history', events, next }));
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
    expect(sentFrames(last()), 'one request at a time').toEqual([
      { type: 'read', ids: ['a', 'b'] },
    ]);
    inbox(last(), 1);
    await expect(some).resolves.toBe(1);
    expect(sentFrames(last()).at(-1)).toEqual({ type: 'read', all: true });
    inbox(last(), 0);
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
    last().raw(
      JSON.stringify({
        type: 'error',
        error: { code: 'inbox_disabled', message: 'this key keeps no inbox', field: 'type' },
      }),
    );
    await expect(read).rejects.toMatchObject({ code: 'inbox_disabled', kind: 'refused' });
    expect(sub.connected()).toBe(true);
    expect(sub.unread()).toBeUndefined();
    herald.disconnect();
  });

  it('sends a request again when the edge says rate_limited (busy with the one before)', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    await settle();
    await accept(last());
    inbox(last(), 2);
    const read = sub.markAllRead();
    const history = sub.history();
    // Another device's change: a count that is not the read's answer, taken for it.
    inbox(last(), 3);
    await expect(read).resolves.toBe(3);
    expect(sentFrames(last())).toHaveLength(2);
    last().raw(
      JSON.stringify({
        type: 'error',
        error: { code: 'rate_limited', message: 'one inbox request at a time', field: 'type' },
      }),
    );
    inbox(last(), 0); // the read's own answer, late: no request takes it
    await vi.advanceTimersByTimeAsync(249);
    expect(sentFrames(last())).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(sentFrames(last())).toEqual([
      { type: 'read', all: true },
      { type: 'history', before: null, limit: 20 },
      { type: 'history', before: null, limit: 20 },
    ]);
    page(last(), [], null);
    await expect(history).resolves.toEqual({ events: [], next: null });
    // A retry pending when the socket goes is rejected, and no timer sends it later.
    const again = sub.history();
    last().raw(
      JSON.stringify({ type: 'error', error: { code: 'rate_limited', message: 'slow down' } }),
    );
    last().serverClose(1006);
    await expect(again).rejects.toMatchObject({ code: 'not_connected' });
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
      { type: 'history', before: null, limit: 2 },
    ]);
    const newest = [
      { id: 'b', ts: 2, payload: { t: 'b' }, read: false },
      { id: 'a', ts: 1, payload: { t: 'a' }, read: true },
    ];
    page(last(), newest, '41');
    await expect(first).resolves.toEqual({ events: newest, next: '41' });
    expect(sentFrames(last()).at(-1)).toEqual({ type: 'history', before: '41', limit: 100 });
    page(last(), [], null);
    await expect(second).resolves.toEqual({ events: [], next: null });
    const third = sub.history();
    expect(sentFrames(last()).at(-1), 'default: the newest 20').toEqual({
      type: 'history',
      before: null,
      limit: 20,
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
    last().raw(
      JSON.stringify({
        type: 'error',
        error: { code: 'inbox_disabled', message: 'not an inbox key', field: 'type' },
      }),
    );
    await expect(refused).rejects.toMatchObject({ code: 'inbox_disabled', field: 'type' });
    expect(sentFrames(last())).toHaveLength(2);
    page(last(), [], null);
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
