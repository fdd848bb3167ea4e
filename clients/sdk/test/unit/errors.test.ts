import { HeraldError } from '@herald/sdk';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { settle, setup, uuid } from './helpers.js';

/** A probe answer as fetch would give it: a status, or the opaque answer of a no-cors request. */
const answer = (status: number, type: ResponseType = 'basic') =>
  (() => Promise.resolve({ status, type, body: null } as Response)) as typeof fetch;

/**
 * A browser's answers to a cross-origin probe of a host that answers without CORS: the CORS
 * request fails as a TypeError (as for no answer at all), the no-cors one is opaque.
 */
const opaqueWithoutCors = ((_url: string, init: RequestInit) =>
  init.mode === 'cors'
    ? Promise.reject(new TypeError('Failed to fetch'))
    : Promise.resolve({ status: 0, type: 'opaque', body: null } as Response)) as typeof fetch;

describe('onError: typed socket errors, and no endless retry (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it.each([
    ['a 404 (ingress-api, or any server without the path)', answer(404)],
    ['a 200 page', answer(200)],
  ])(
    'a socket URL that answers %s is a wrong endpoint: reported once, never retried',
    async (_, fetch) => {
      const probed: string[] = [];
      const { herald, sockets, last } = setup({
        wsUrl: 'wss://api.test',
        fetch: ((url: string, init: RequestInit) => {
          probed.push(`${url} ${init.mode}`);
          return fetch(url, init);
        }) as typeof globalThis.fetch,
      });
      const errors: HeraldError[] = [];
      herald.onError((e) => errors.push(e));
      const sub = herald.subscribe(uuid());
      const subErrors: string[] = [];
      sub.onError((e) => subErrors.push(e.code));
      await settle();
      last().serverClose(1006);
      await vi.advanceTimersByTimeAsync(60_000);
      // The probe never carries the key: the query is dropped.
      expect(probed[0]).toBe('https://api.test/ws/connect cors');
      expect(errors.map((e) => [e.code, e.kind, e.field])).toEqual([
        ['wrong_endpoint', 'wrong_endpoint', 'wsUrl'],
      ]);
      expect(errors[0]?.message).toContain('wss://api.test/ws/connect answered');
      expect(errors[0]?.message).not.toContain('hk_test');
      expect(subErrors).toEqual(['wrong_endpoint']);
      // At most the one retry scheduled before the probe answered; none after.
      expect(sockets.length).toBeLessThanOrEqual(2);
      expect(vi.getTimerCount()).toBe(0);
      herald.disconnect();
    },
  );

  it('an unreachable host is a network error: reported once per outage while retrying', async () => {
    const { herald, sockets, last } = setup();
    const errors: string[] = [];
    herald.onError((e) => errors.push(`${e.kind}:${e.code}`));
    herald.subscribe(uuid());
    await settle();
    for (let i = 0; i < 4; i++) {
      last().serverClose(1006);
      await vi.advanceTimersByTimeAsync(1000);
    }
    expect(sockets.length).toBe(5);
    expect(errors).toEqual(['network:network_error']);
    // Up, then down again: a new outage is reported again.
    last().open();
    await settle();
    expect(herald.connected()).toBe(true);
    last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(1000);
    last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(1000);
    expect(errors).toEqual(['network:network_error', 'network:network_error']);
    herald.disconnect();
  });

  it('names the cause Node gives a socket that never opened (its error event), not a list of guesses', async () => {
    const { herald, last } = setup();
    const errors: HeraldError[] = [];
    herald.onError((e) => errors.push(e));
    herald.subscribe(uuid());
    await settle();
    // What `ws` dispatches before the close when nothing listens on the port.
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8444'), {
      code: 'ECONNREFUSED',
    });
    last().onerror?.({ type: 'error', message: refused.message, error: refused });
    last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(1000);
    expect(errors.map((e) => [e.code, e.kind, e.field])).toEqual([
      ['network_error', 'network', 'wsUrl'],
    ]);
    expect(errors[0]?.message).toBe(
      'Could not open a socket at wss://edge.test/ws/connect: nothing listens on edge.test (connect ECONNREFUSED 127.0.0.1:8444): start the service, or correct the port. Retrying with backoff',
    );
    expect(errors[0]?.cause).toMatchObject({ error: refused });
    herald.disconnect();
  });

  it('an answer the page may not read (cross-origin, no CORS) is retried, never given up: a proxy before a restarting edge', async () => {
    const probed: string[] = [];
    const { herald, sockets, last } = setup({
      wsUrl: 'wss://api.test',
      fetch: ((url: string, init: RequestInit) => {
        probed.push(`${url} ${init.mode}`);
        return opaqueWithoutCors(url, init);
      }) as typeof fetch,
    });
    const errors: HeraldError[] = [];
    herald.onError((e) => errors.push(e));
    herald.subscribe(uuid());
    await settle();
    for (let i = 0; i < 4; i++) {
      last().serverClose(1006);
      await vi.advanceTimersByTimeAsync(1000);
    }
    // One probe, asked with CORS first and then without; reported once, retried throughout.
    expect(probed.slice(0, 2)).toEqual([
      'https://api.test/ws/connect cors',
      'https://api.test/ws/connect no-cors',
    ]);
    expect(errors.map((e) => [e.code, e.kind, e.field])).toEqual([
      ['endpoint_unverified', 'unavailable', 'wsUrl'],
    ]);
    expect(errors[0]?.message).toContain('wss://api.test/ws/connect answered');
    expect(errors[0]?.message).not.toContain('hk_test');
    expect(sockets.length).toBe(5);
    // The edge is back: the socket opens on the next retry.
    last().open();
    await settle();
    expect(herald.connected()).toBe(true);
    herald.disconnect();
  });

  it('probes once per outage of a URL that worked: later failures send no request', async () => {
    const probes: string[] = [];
    const { herald, last } = setup({
      fetch: ((url: string, init: RequestInit) => {
        probes.push(`${url} ${init.mode}`);
        return Promise.reject(new TypeError('fetch failed'));
      }) as typeof fetch,
    });
    herald.subscribe(uuid());
    await settle();
    last().open();
    await settle();
    for (let i = 0; i < 4; i++) {
      last().serverClose(1006);
      await vi.advanceTimersByTimeAsync(1000);
    }
    // One probe: its CORS request, and the no-cors one after it failed.
    expect(probes.map((p) => p.split(' ')[1])).toEqual(['cors', 'no-cors']);
    herald.disconnect();
  });

  it("the edge's own answer to a plain GET (400) means it is up: a transient failure, retried", async () => {
    const { herald, sockets, last } = setup({ fetch: answer(400) });
    const kinds: string[] = [];
    herald.onError((e) => kinds.push(e.kind));
    herald.subscribe(uuid());
    await settle();
    last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(1000);
    expect(sockets.length).toBe(2);
    expect(kinds).toEqual(['network']);
    herald.disconnect();
  });

  it('a URL that worked once is never called wrong: an edge restarting behind a proxy is retried', async () => {
    const { herald, sockets, last } = setup({ fetch: answer(404) });
    const kinds: string[] = [];
    herald.onError((e) => kinds.push(e.kind));
    herald.subscribe(uuid());
    await settle();
    last().open();
    await settle();
    last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(1000);
    last().serverClose(1006);
    await vi.advanceTimersByTimeAsync(1000);
    expect(sockets.length).toBe(3);
    expect(kinds).toEqual([]);
    herald.disconnect();
  });

  it('refusals are typed by their close code: 4401/4403 refused (stop), 4503 unavailable (retry)', async () => {
    const { herald, sockets, last } = setup();
    const seen: string[] = [];
    herald.onError((e) => seen.push(`${e.kind}:${e.code}:${e.closeCode}`));
    herald.subscribe(uuid());
    await settle();
    last().refuse(4503, 'unavailable');
    await vi.advanceTimersByTimeAsync(1000);
    expect(sockets.length).toBe(2);
    last().refuse(4403, 'origin_mismatch');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sockets.length).toBe(2);
    expect(seen).toEqual(['unavailable:unavailable:4503', 'refused:origin_mismatch:4403']);
    herald.disconnect();
  });

  it('kind is derived for every error, notify ones included', () => {
    expect(new HeraldError('rate_limited', 'm', { httpStatus: 403 }).kind).toBe('refused');
    expect(new HeraldError('queue_full', 'm', { httpStatus: 507 }).kind).toBe('unavailable');
    expect(new HeraldError('timeout', 'm').kind).toBe('network');
    expect(new HeraldError('not_found', 'm', { httpStatus: 404 }).kind).toBe('wrong_endpoint');
    expect(new HeraldError('unexpected_response', 'm').kind).toBe('wrong_endpoint');
    expect(new HeraldError('unexpected_response', 'm', { closeCode: 4401 }).kind).toBe('refused');
    expect(new HeraldError('websocket_unavailable', 'm').kind).toBe('runtime');
  });
});

describe('acceptDelayMs: a refused socket never shows as connected (fake timers)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('a refusal arriving several tasks after open (as browsers deliver it) never flips to connected', async () => {
    const { herald, last } = setup({ acceptDelayMs: undefined });
    const states: string[] = [];
    herald.onConnectionChange((s) => states.push(s));
    herald.subscribe(uuid());
    await settle();
    const sock = last();
    sock.open();
    await vi.advanceTimersByTimeAsync(500);
    sock.raw(JSON.stringify({ type: 'error', error: { code: 'origin_mismatch', message: 'm' } }));
    sock.serverClose(4403, '{"code":"origin_mismatch"}');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(states).toEqual([]);
    herald.disconnect();
  });

  it('an accepted socket is connected after the default 1000 ms, or at its first event', async () => {
    const { herald, last } = setup({ acceptDelayMs: undefined });
    herald.subscribe(uuid());
    await settle();
    last().open();
    await vi.advanceTimersByTimeAsync(999);
    expect(herald.connected()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(herald.connected()).toBe(true);
    herald.disconnect();
  });
});
