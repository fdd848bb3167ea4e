import { DispatchStatus, Herald, type NotifyResult } from '@herald/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KEY, uuid } from './helpers.js';

type Call = { url: string; init: RequestInit };

/** A fetch answering with a fixed response, recording what it was asked. */
function answering(status: number, body: string, headers: Record<string, string> = {}) {
  const calls: Call[] = [];
  const fetch = vi.fn(async (url: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(url), init: init ?? {} });
    return new Response(body, {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    });
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, calls };
}

function herald(fetch: typeof globalThis.fetch, extra: { notifyTimeoutMs?: number } = {}) {
  return new Herald({
    apiKey: KEY,
    client: 'mobile',
    baseUrl: 'https://api.test/herald/',
    fetch,
    ...extra,
  });
}

const error = (code: string, field?: string) =>
  JSON.stringify({ error: { code, message: `because ${code}`, ...(field ? { field } : {}) } });

describe('notify (injected fetch)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('POSTs JSON to {baseUrl}/notify with the key in the body, never in a header', async () => {
    const { fetch, calls } = answering(200, '{"status":"sent","id":"ev-1"}');
    const r = uuid();
    await herald(fetch).notify({ recipient: r, payload: { a: [1, { b: null }] } });
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call?.url).toBe('https://api.test/herald/notify');
    expect(call?.init.method).toBe('POST');
    expect(JSON.parse(String(call?.init.body))).toEqual({
      recipient: r,
      payload: { a: [1, { b: null }] },
      api_key: KEY,
      client: 'mobile',
    });
    expect(call?.init.headers).toEqual({ 'content-type': 'application/json' });
  });

  it('sends idempotencyKey as Idempotency-Key, origin as Origin, and a per-call client', async () => {
    const { fetch, calls } = answering(
      202,
      '{"status":"User offline, notification saved","id":"ev-2"}',
    );
    await herald(fetch).notify({
      recipient: uuid(),
      payload: 'x',
      idempotencyKey: 'order-42',
      origin: 'https://app.example.com',
      client: 'web',
    });
    expect(calls[0]?.init.headers).toEqual({
      'content-type': 'application/json',
      'idempotency-key': 'order-42',
      origin: 'https://app.example.com',
    });
    expect(JSON.parse(String(calls[0]?.init.body)).client).toBe('web');
  });

  it.each<
    [string, number, string, Record<string, string>, Partial<NotifyResult>, object | undefined]
  >([
    [
      'sent',
      200,
      '{"status":"sent","id":"e1"}',
      {},
      { status: 'sent', id: 'e1', httpStatus: 200 },
      undefined,
    ],
    [
      'queued',
      202,
      '{"status":"User offline, notification saved","id":"e2"}',
      {},
      { status: 'User offline, notification saved', id: 'e2', httpStatus: 202 },
      undefined,
    ],
    [
      'failed (503)',
      503,
      '{"status":"Failed to send/save notification","error":{"code":"unavailable","message":"NATS down"}}',
      {},
      { status: 'Failed to send/save notification', httpStatus: 503 },
      { code: 'unavailable', message: 'NATS down', httpStatus: 503 },
    ],
    [
      '400',
      400,
      error('invalid_recipient', 'recipient'),
      {},
      { httpStatus: 400 },
      { code: 'invalid_recipient', field: 'recipient' },
    ],
    [
      '401',
      401,
      error('key_revoked', 'api_key'),
      {},
      { httpStatus: 401 },
      { code: 'key_revoked', field: 'api_key' },
    ],
    [
      '403',
      403,
      error('origin_mismatch', 'Origin'),
      {},
      { httpStatus: 403 },
      { code: 'origin_mismatch', field: 'Origin' },
    ],
    [
      '403 rate limited',
      403,
      error('rate_limited'),
      { 'retry-after': '7' },
      { httpStatus: 403 },
      { code: 'rate_limited', retryAfter: 7 },
    ],
    [
      '409',
      409,
      error('idempotency_in_progress'),
      {},
      { httpStatus: 409 },
      { code: 'idempotency_in_progress' },
    ],
    [
      '413',
      413,
      error('payload_too_large', 'payload'),
      {},
      { httpStatus: 413 },
      { code: 'payload_too_large', field: 'payload' },
    ],
    [
      '429',
      429,
      error('rate_limited'),
      { 'retry-after': '2.5' },
      { httpStatus: 429 },
      { code: 'rate_limited', retryAfter: 3 },
    ],
    ['507', 507, error('queue_full'), {}, { httpStatus: 507 }, { code: 'queue_full' }],
    [
      'a code newer than this SDK',
      400,
      error('some_future_code'),
      {},
      { httpStatus: 400 },
      { code: 'some_future_code' },
    ],
    [
      'a proxy page',
      502,
      '<html>Bad Gateway</html>',
      {},
      { status: 'Failed to send/save notification', httpStatus: 502 },
      // A proxy's 5xx is its upstream restarting: unavailable (retry), as a Herald 5xx is.
      { code: 'unexpected_response', httpStatus: 502, kind: 'unavailable' },
    ],
    [
      'a 200 that is not Herald',
      200,
      '{"ok":true}',
      {},
      { status: 'Failed to send/save notification', httpStatus: 200 },
      { code: 'unexpected_response', kind: 'wrong_endpoint' },
    ],
  ])('maps %s', async (_name, status, body, headers, expected, expectedError) => {
    const { fetch } = answering(status, body, headers);
    const result = await herald(fetch).notify({ recipient: uuid(), payload: {} });
    expect(result).toMatchObject(expected);
    if (expectedError) {
      expect(result.status).toBe(DispatchStatus.failed);
      expect(result.error).toMatchObject({ name: 'HeraldError', ...expectedError });
      expect(result.error).toBeInstanceOf(Error);
      expect(result.id).toBeUndefined();
    } else {
      expect(result.error).toBeUndefined();
    }
  });

  it('reads Retry-After given as an HTTP date', async () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    const { fetch } = answering(403, error('rate_limited'), { 'retry-after': at });
    const result = await herald(fetch).notify({ recipient: uuid(), payload: 1 });
    expect(result.error?.retryAfter).toBeGreaterThanOrEqual(28);
    expect(result.error?.retryAfter).toBeLessThanOrEqual(30);
  });

  it('resolves a network error as network_error with httpStatus 0', async () => {
    const fetch = vi.fn(async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof globalThis.fetch;
    const result = await herald(fetch).notify({ recipient: uuid(), payload: 1 });
    expect(result).toMatchObject({
      status: DispatchStatus.failed,
      httpStatus: 0,
      error: { code: 'network_error', httpStatus: 0 },
    });
    expect(result.error?.message).not.toContain(KEY);
  });

  it("names Node's cause of a failed fetch: an untrusted certificate, and how to trust the dev CA", async () => {
    // undici's shape: a bare TypeError whose cause is the TLS error.
    const tls = Object.assign(new Error('self-signed certificate in certificate chain'), {
      code: 'SELF_SIGNED_CERT_IN_CHAIN',
    });
    const fetch = vi.fn(async () => {
      throw new TypeError('fetch failed', { cause: tls });
    }) as unknown as typeof globalThis.fetch;
    const result = await herald(fetch).notify({ recipient: uuid(), payload: 1 });
    expect(result.error).toMatchObject({
      code: 'network_error',
      kind: 'network',
      cause: { cause: tls },
    });
    expect(result.error?.message).toBe(
      "Could not reach Herald at https://api.test/herald: api.test's TLS certificate is not trusted here (self-signed certificate in certificate chain, SELF_SIGNED_CERT_IN_CHAIN): trust the CA that issued it. For make dev's local CA, start Node with NODE_EXTRA_CA_CERTS=.data/tls/ca.crt, or pass options.fetch and options.WebSocket that trust it",
    );
  });

  it('resolves a timeout after exactly notifyTimeoutMs, and leaves no timer', async () => {
    vi.useFakeTimers();
    let aborted = false;
    const fetch = vi.fn(
      (_url: string, init: RequestInit) =>
        new Promise<Response>((_resolve, reject) => {
          init.signal?.addEventListener('abort', () => {
            aborted = true;
            reject(new DOMException('aborted', 'AbortError'));
          });
        }),
    ) as unknown as typeof globalThis.fetch;
    let result: NotifyResult | undefined;
    void herald(fetch, { notifyTimeoutMs: 2000 })
      .notify({ recipient: uuid(), payload: 1 })
      .then((r) => {
        result = r;
      });
    await vi.advanceTimersByTimeAsync(1999);
    expect(aborted).toBe(false);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(aborted).toBe(true);
    expect(result).toMatchObject({
      status: DispatchStatus.failed,
      httpStatus: 0,
      error: { code: 'timeout' },
    });
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'a recipient that is not a UUID v4',
      { recipient: 'c232ab00-9414-11ec-b3c8-9f6bdeced846', payload: 1 },
      /recipient must be a UUID v4/,
    ],
    ['no recipient', { payload: 1 }, /recipient must be a UUID v4/],
    ['no payload', { recipient: 'R' }, /payload is required/],
    [
      'a payload JSON cannot hold',
      { recipient: 'R', payload: { n: 1n } },
      /payload must be JSON-serialisable/,
    ],
    [
      'a circular payload',
      { recipient: 'R', payload: 'circular' },
      /payload must be JSON-serialisable/,
    ],
    [
      'a bad client',
      { recipient: 'R', payload: 1, client: 'tv' },
      /notify client must be 'web' or 'mobile'/,
    ],
    [
      'an empty idempotencyKey',
      { recipient: 'R', payload: 1, idempotencyKey: '' },
      /idempotencyKey must be a non-empty string/,
    ],
    [
      'a non-string origin',
      { recipient: 'R', payload: 1, origin: 42 },
      /origin must be a non-empty string/,
    ],
  ])('rejects with a TypeError for %s, without a request', async (_name, input, message) => {
    const { fetch, calls } = answering(200, '{}');
    const r = uuid();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const resolved = {
      ...input,
      ...(input.recipient === 'R' ? { recipient: r } : {}),
      ...(input.payload === 'circular' ? { payload: circular } : {}),
    };
    await expect(herald(fetch).notify(resolved as never)).rejects.toThrow(TypeError);
    await expect(herald(fetch).notify(resolved as never)).rejects.toThrow(message);
    expect(calls).toHaveLength(0);
  });
});
