import { Herald } from '@herald/sdk';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeWebSocket } from './fake-websocket.js';
import { accept, KEY, settle, setup, uuid } from './helpers.js';

describe('connection state (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('fires exactly once per real transition across subscriptions (connected = any socket up)', async () => {
    const { herald, sockets } = setup();
    const states: string[] = [];
    herald.onConnectionChange((s) => states.push(s));
    const a = herald.subscribe(uuid());
    const b = herald.subscribe(uuid());
    await settle();
    const [sa, sb] = sockets;
    if (!sa || !sb) throw new Error('two sockets expected');
    expect(herald.connected()).toBe(false);
    // Open, but not yet known to be accepted: still disconnected.
    sa.open();
    expect(herald.connected()).toBe(false);
    await settle();
    expect(states).toEqual(['connected']);
    await accept(sb);
    expect(states).toEqual(['connected']);
    sa.serverClose(1006);
    expect([a.connected(), b.connected(), herald.connected()]).toEqual([false, true, true]);
    sb.serverClose(1006);
    expect(states).toEqual(['connected', 'disconnected']);
    await vi.advanceTimersByTimeAsync(50);
    expect(sockets).toHaveLength(4);
    for (const s of sockets.slice(2)) await accept(s);
    expect(states).toEqual(['connected', 'disconnected', 'connected']);
    herald.disconnect();
    expect(states).toEqual(['connected', 'disconnected', 'connected', 'disconnected']);
    expect(herald.connected()).toBe(false);
  });

  it('does not flap to connected for a socket refused right after it opened', async () => {
    const { herald, last } = setup();
    const states: string[] = [];
    herald.onConnectionChange((s) => states.push(s));
    const sub = herald.subscribe(uuid());
    const subStates: string[] = [];
    sub.onConnectionChange((s) => subStates.push(s));
    await settle();
    last().refuse(4401, 'invalid_api_key');
    await settle();
    expect(states).toEqual([]);
    expect(subStates).toEqual([]);
  });

  it('an event frame proves acceptance at once', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    await settle();
    last().open();
    last().event('e1', 1);
    expect(sub.connected()).toBe(true);
    expect(herald.connected()).toBe(true);
    herald.disconnect();
  });

  it('keeps listeners across reconnects', async () => {
    const { herald, sockets, last } = setup();
    const seen: unknown[] = [];
    herald.subscribe(uuid()).listen((p) => seen.push(p));
    await settle();
    await accept(last());
    last().event('a', 'first');
    last().serverClose(1001);
    await vi.advanceTimersByTimeAsync(50);
    expect(sockets).toHaveLength(2);
    await accept(last());
    last().event('b', 'second');
    expect(seen).toEqual(['first', 'second']);
    herald.disconnect();
  });

  it('shares one socket between handles of a recipient; each handle removes only its own listeners', async () => {
    const { herald, sockets, last } = setup();
    const r = uuid();
    const one = herald.subscribe(r);
    const two = herald.subscribe(r.toUpperCase());
    expect(two.recipient).toBe(r);
    const seen: string[] = [];
    one.listen(() => seen.push('one'));
    two.listen(() => seen.push('two'));
    await settle();
    expect(sockets).toHaveLength(1);
    await accept(last());
    one.unsubscribe();
    one.unsubscribe();
    expect(last().closedWith).toBeUndefined();
    last().event('x', {});
    expect(seen).toEqual(['two']);
    expect(one.connected()).toBe(false);
    expect(two.connected()).toBe(true);
    two.unsubscribe();
    expect(last().closedWith).toBe(1000);
    expect(herald.connected()).toBe(false);
  });

  it('an unsubscribe function removes its listener only, and twice is harmless', async () => {
    const { herald, last } = setup();
    const sub = herald.subscribe(uuid());
    const seen: string[] = [];
    const listener = (p: unknown) => seen.push(String(p));
    const off = sub.listen(listener);
    sub.listen(listener);
    await settle();
    await accept(last());
    off();
    off();
    last().event('1', 'x');
    expect(seen).toEqual(['x']);
    herald.disconnect();
  });

  it('leaves no timer and no open socket after disconnect, in any phase; disconnect is idempotent', async () => {
    const { herald, sockets, last } = setup({ connectTimeoutMs: 10_000 });
    const opening = herald.subscribe(uuid());
    await settle();
    const open = herald.subscribe(uuid());
    await settle();
    await accept(last());
    const waiting = herald.subscribe(uuid());
    await settle();
    last().serverClose(1006);
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    herald.disconnect();
    herald.disconnect();
    expect(vi.getTimerCount()).toBe(0);
    expect(sockets.map((s) => s.readyState)).toEqual([3, 3, 3]);
    expect([opening, open, waiting].map((s) => s.connected())).toEqual([false, false, false]);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(sockets).toHaveLength(3);
    // The instance stays usable.
    herald.subscribe(uuid());
    await settle();
    expect(sockets).toHaveLength(4);
    herald.disconnect();
  });

  it('a disconnect while the WebSocket constructor is still being resolved opens nothing', async () => {
    const { herald, sockets } = setup();
    herald.subscribe(uuid());
    herald.disconnect();
    await settle();
    expect(sockets).toHaveLength(0);
  });

  it('keeps several instances independent', async () => {
    const f1 = fakeWebSocket();
    const f2 = fakeWebSocket();
    const opts = {
      apiKey: KEY,
      client: 'mobile' as const,
      wsUrl: 'wss://edge.test',
      acceptDelayMs: 0,
    };
    const h1 = new Herald({ ...opts, WebSocket: f1.WebSocket });
    const h2 = new Herald({ ...opts, WebSocket: f2.WebSocket });
    const r = uuid();
    const seen: string[] = [];
    h1.subscribe(r).listen(() => seen.push('h1'));
    h2.subscribe(r).listen(() => seen.push('h2'));
    await settle();
    await accept(f1.last());
    await accept(f2.last());
    h1.disconnect();
    expect(h2.connected()).toBe(true);
    f2.last().event('e', 1);
    expect(seen).toEqual(['h2']);
    h2.disconnect();
  });

  it('reports a WebSocket that refuses to open (CSP, mixed content) and does not retry', async () => {
    const blocked = new Herald({
      apiKey: KEY,
      client: 'web',
      wsUrl: 'wss://edge.test',
      WebSocket: class {
        constructor() {
          throw new Error('blocked by policy');
        }
      } as never,
    });
    const codes: string[] = [];
    blocked.subscribe(uuid()).onError((e) => codes.push(`${e.code}: ${e.message}`));
    await settle();
    expect(codes).toEqual([
      'websocket_unavailable: WebSocket refused to open: Error: blocked by policy',
    ]);
    expect(vi.getTimerCount()).toBe(0);
    blocked.disconnect();
  });
});
