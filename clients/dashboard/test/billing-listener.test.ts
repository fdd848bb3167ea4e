import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type FakeSocket, fakeWebSocket } from '../../sdk/test/unit/fake-websocket.js';
import { type Listener, RELISTEN_MS, startBillingListener } from '../src/useBillingListener.js';

const LIFE_MS = 60_000;
const RENEW_MS = LIFE_MS * 0.8;
/** The SDK's default: an opened socket is up once this passes without a refusal. */
const ACCEPT_MS = 1000;

/**
 * The socket hand-over at credential renewal, under fake timers: when each socket opens, is
 * refused or closes is scripted (the SDK's fake WebSocket), since a real edge cannot be made to
 * refuse exactly the renewal's socket. The real stack runs the page in billing-browser.test.ts.
 */
describe('startBillingListener: credential renewal', () => {
  let fake: ReturnType<typeof fakeWebSocket>;
  let mints: number;
  let connected: boolean[];
  let stop: () => void;

  const open = () => fake.sockets.filter((s) => s.readyState < 2);
  const accept = async (s: FakeSocket) => {
    s.open();
    await vi.advanceTimersByTimeAsync(ACCEPT_MS);
  };

  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    fake = fakeWebSocket();
    vi.stubGlobal('WebSocket', fake.WebSocket);
    // The SDK probes a socket URL that failed before opening: no network here.
    vi.stubGlobal('fetch', () => Promise.reject(new TypeError('fetch failed')));
    mints = 0;
    connected = [];
    stop = startBillingListener({
      mint: async (): Promise<Listener> => ({
        api_key: `hk_dash_credential-${++mints}`,
        recipient: '6f1c2b9e-8a4d-4c3e-9b7a-2d5e8f1a3c4b',
        client: 'web',
        ws_url: 'wss://edge.test',
        expires_at: new Date(Date.now() + LIFE_MS).toISOString(),
      }),
      onConnected: (c) => connected.push(c),
      onNotice: () => {},
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(fake.sockets).toHaveLength(1);
    await accept(fake.sockets[0] as FakeSocket);
    expect(connected.at(-1)).toBe(true);
  });
  afterEach(() => {
    stop();
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('closes the old socket once the renewed one is accepted', async () => {
    const [first] = fake.sockets as [FakeSocket];
    await vi.advanceTimersByTimeAsync(RENEW_MS);
    expect(fake.sockets).toHaveLength(2);
    expect(open()).toHaveLength(2);
    await accept(fake.last());
    expect(first.readyState).toBe(3);
    expect(open()).toEqual([fake.last()]);
    expect(connected.at(-1)).toBe(true);
  });

  it('a refused renewal is closed, the current socket kept, and closed after the next renewal', async () => {
    const [first] = fake.sockets as [FakeSocket];
    await vi.advanceTimersByTimeAsync(RENEW_MS);
    const refused = fake.last();
    refused.refuse(4401, 'key_expired');
    await vi.advanceTimersByTimeAsync(0);
    expect(refused.readyState).toBe(3);
    expect(open()).toEqual([first]);
    // The page still has its socket: it does not fall back to polling.
    expect(connected.at(-1)).toBe(true);
    await vi.advanceTimersByTimeAsync(RELISTEN_MS);
    expect(fake.sockets).toHaveLength(3);
    await accept(fake.last());
    expect(first.readyState).toBe(3);
    expect(open()).toEqual([fake.last()]);
  });

  it('a renewal never accepted gives way to the next: never more than two sockets', async () => {
    const [first] = fake.sockets as [FakeSocket];
    await vi.advanceTimersByTimeAsync(RENEW_MS);
    // The edge never answers: the SDK keeps timing out and retrying the renewal's socket.
    expect(open()).toEqual([first, fake.last()]);
    const before = fake.sockets.length;
    await vi.advanceTimersByTimeAsync(RENEW_MS - ACCEPT_MS);
    expect(fake.sockets.length).toBeGreaterThan(before);
    expect(open()).toHaveLength(2);
    expect(open()[0]).toBe(first);
    await accept(fake.last());
    expect(open()).toEqual([fake.last()]);
  });

  it('when the current socket is refused, a renewal under way takes over', async () => {
    const [first] = fake.sockets as [FakeSocket];
    await vi.advanceTimersByTimeAsync(RENEW_MS);
    const renewal = fake.last();
    first.raw(JSON.stringify({ type: 'error', error: { code: 'key_expired', message: 'x' } }));
    first.serverClose(4401, JSON.stringify({ code: 'key_expired' }));
    await vi.advanceTimersByTimeAsync(0);
    expect(connected.at(-1)).toBe(false);
    await accept(renewal);
    expect(connected.at(-1)).toBe(true);
    // No extra credential: the renewal's own timer renews it.
    await vi.advanceTimersByTimeAsync(RELISTEN_MS);
    expect(mints).toBe(2);
    expect(open()).toEqual([renewal]);
  });

  it('stopping during a hand-over closes both sockets', async () => {
    await vi.advanceTimersByTimeAsync(RENEW_MS);
    expect(open()).toHaveLength(2);
    stop();
    expect(open()).toEqual([]);
  });
});
