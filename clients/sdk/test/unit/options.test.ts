import { Herald, type HeraldOptions } from '@herald/sdk';
import { describe, expect, it } from 'vitest';
import { fakeWebSocket } from './fake-websocket.js';
import { KEY, uuid } from './helpers.js';

const base = { apiKey: KEY, client: 'web' } as const;
const make = (o: Partial<HeraldOptions> | unknown) => () =>
  new Herald({ ...base, ...(o as object) });

describe('options', () => {
  it.each<[string, unknown, RegExp]>([
    ['no options object', null, /pass an options object/],
    ['no apiKey', { apiKey: undefined }, /options.apiKey is required/],
    ['an empty apiKey', { apiKey: '' }, /options.apiKey is required/],
    ['a bad client', { client: 'tv' }, /options.client must be 'web' or 'mobile'/],
    ['a relative baseUrl', { baseUrl: '/api' }, /options.baseUrl must be an absolute URL/],
    [
      'plain http to a remote host',
      { baseUrl: 'http://herald.example.com' },
      /options.baseUrl must use https:/,
    ],
    [
      'plain ws to a remote host',
      { wsUrl: 'ws://herald.example.com' },
      /options.wsUrl must use wss:/,
    ],
    ['an https wsUrl', { wsUrl: 'https://herald.example.com' }, /options.wsUrl must use wss:/],
    [
      'a wsUrl with a query',
      { wsUrl: 'wss://h.example.com/?a=1' },
      /options.wsUrl must not carry a query/,
    ],
    [
      'a WebSocket that is not a constructor',
      { WebSocket: {} },
      /options.WebSocket must be a WebSocket function/,
    ],
    [
      'a fetch that is not a function',
      { fetch: 'fetch' },
      /options.fetch must be a fetch function/,
    ],
    [
      'backoff.baseMs 0',
      { backoff: { baseMs: 0 } },
      /options.backoff.baseMs must be an integer >= 1/,
    ],
    [
      'backoff.capMs over a day (setTimeout would fire at once)',
      { backoff: { capMs: 86_400_001 } },
      /options.backoff.capMs \(86400001\) must be at least options.backoff.baseMs \(1000\) and at most 86400000/,
    ],
    [
      'backoff.baseMs over a day (so over capMs)',
      { backoff: { baseMs: 86_400_001, capMs: 86_400_000 } },
      /capMs \(86400000\) must be at least options.backoff.baseMs \(86400001\)/,
    ],
    [
      'backoff.capMs below baseMs',
      { backoff: { baseMs: 500, capMs: 499 } },
      /capMs \(499\) must be at least options.backoff.baseMs \(500\) and at most 86400000/,
    ],
    [
      'a fractional stableMs',
      { backoff: { stableMs: 1.5 } },
      /options.backoff.stableMs must be an integer >= 0/,
    ],
    [
      'connectTimeoutMs 0',
      { connectTimeoutMs: 0 },
      /options.connectTimeoutMs must be an integer >= 1/,
    ],
    [
      'notifyTimeoutMs NaN',
      { notifyTimeoutMs: Number.NaN },
      /options.notifyTimeoutMs must be an integer >= 1/,
    ],
    ['dedupCapacity 0', { dedupCapacity: 0 }, /options.dedupCapacity must be an integer >= 1/],
    ['a logger that is not an object', { logger: 'console' }, /options.logger must be an object/],
  ])('throws a TypeError naming the option for %s', (_name, options, message) => {
    const build = options === null ? () => new Herald(null as never) : make(options);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(message);
  });

  it('accepts every limit at its edge', () => {
    expect(
      make({
        backoff: { baseMs: 1, capMs: 1, stableMs: 0 },
        connectTimeoutMs: 1,
        notifyTimeoutMs: 1,
        dedupCapacity: 1,
      }),
    ).not.toThrow();
  });

  it('accepts a backoff of one day at most', () => {
    expect(make({ backoff: { baseMs: 86_400_000, capMs: 86_400_000 } })).not.toThrow();
  });

  it('allows plain http/ws on loopback only (a local stack with TLS_DISABLED)', () => {
    for (const host of ['localhost:8443', '127.0.0.1:1', '[::1]:8443']) {
      expect(make({ baseUrl: `http://${host}`, wsUrl: `ws://${host}` })).not.toThrow();
    }
  });

  it.each([
    [{}, 'wss://localhost:8444/ws/connect'],
    [{ baseUrl: 'https://herald.example.com/rt/' }, 'wss://herald.example.com/rt/ws/connect'],
    [{ baseUrl: 'http://localhost:9000' }, 'ws://localhost:9000/ws/connect'],
    [
      { baseUrl: 'https://a.example.com', wsUrl: 'wss://b.example.com' },
      'wss://b.example.com/ws/connect',
    ],
  ])('derives the socket URL from %j', async (o, expected) => {
    const fake = fakeWebSocket();
    const h = new Herald({ ...base, ...o, WebSocket: fake.WebSocket });
    h.subscribe(uuid());
    await new Promise((r) => setTimeout(r, 0));
    const url = new URL(fake.last().url);
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe(expected);
    h.disconnect();
  });

  it('rejects a subscribe to something that is not a UUID v4', () => {
    const h = new Herald(base);
    expect(() => h.subscribe('not-a-uuid')).toThrow(TypeError);
    expect(() => h.subscribe('c232ab00-9414-11ec-b3c8-9f6bdeced846')).toThrow(
      /subscribe\(recipient\) needs a UUID v4/,
    );
  });

  it('rejects a listener that is not a function', () => {
    const fake = fakeWebSocket();
    const h = new Herald({ ...base, WebSocket: fake.WebSocket });
    const sub = h.subscribe(uuid());
    expect(() => sub.listen('nope' as never)).toThrow(
      new TypeError('Herald: a listener must be a function, got string'),
    );
    h.disconnect();
  });
});
