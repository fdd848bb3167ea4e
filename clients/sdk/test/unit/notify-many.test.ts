import { DispatchStatus, Herald } from '@herald/sdk';
import { describe, expect, it, vi } from 'vitest';
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

const herald = (fetch: typeof globalThis.fetch) =>
  new Herald({ apiKey: KEY, client: 'mobile', baseUrl: 'https://api.test/herald/', fetch });

describe('notifyMany (injected fetch)', () => {
  it('POSTs every event in one body to {baseUrl}/notify/batch, key in the body', async () => {
    const { fetch, calls } = answering(200, '{"results":[]}');
    const [a, b] = [uuid(), uuid()];
    await herald(fetch).notifyMany(
      [
        { recipient: a, payload: { n: 1 } },
        { recipient: b, payload: [2] },
      ],
      { idempotencyKey: 'k-1' },
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url).toBe('https://api.test/herald/notify/batch');
    expect(JSON.parse(String(calls[0]?.init.body))).toEqual({
      api_key: KEY,
      client: 'mobile',
      events: [
        { recipient: a, payload: { n: 1 } },
        { recipient: b, payload: [2] },
      ],
    });
    expect(calls[0]?.init.headers).toEqual({
      'content-type': 'application/json',
      'idempotency-key': 'k-1',
    });
  });

  it('resolves to one result per event, in order, with notify statuses', async () => {
    const { fetch } = answering(
      200,
      JSON.stringify({
        results: [
          { status: 'sent', id: 'e1', http_status: 200 },
          { status: 'User offline, notification saved', id: 'e2', http_status: 202 },
          {
            error: { code: 'invalid_recipient', message: 'bad', field: 'recipient' },
            http_status: 400,
          },
          {
            status: 'Failed to send/save notification',
            error: { code: 'unavailable', message: 'retry' },
            http_status: 503,
          },
        ],
      }),
    );
    const events = Array.from({ length: 4 }, (_, n) => ({ recipient: uuid(), payload: n }));
    const results = await herald(fetch).notifyMany(events);
    expect(results.map((r) => [r.status, r.httpStatus, r.id, r.error?.code])).toEqual([
      [DispatchStatus.sent, 200, 'e1', undefined],
      [DispatchStatus.queued, 202, 'e2', undefined],
      [DispatchStatus.failed, 400, undefined, 'invalid_recipient'],
      [DispatchStatus.failed, 503, undefined, 'unavailable'],
    ]);
    expect(results[2]?.error?.field).toBe('recipient');
  });

  it('a refused request fails every event with its error and Retry-After', async () => {
    const { fetch } = answering(
      403,
      JSON.stringify({ error: { code: 'rate_limited', message: 'slow down', field: 'api_key' } }),
      { 'retry-after': '3' },
    );
    const results = await herald(fetch).notifyMany([
      { recipient: uuid(), payload: 1 },
      { recipient: uuid(), payload: 2 },
    ]);
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r.status).toBe(DispatchStatus.failed);
      expect(r.httpStatus).toBe(403);
      expect(r.error?.code).toBe('rate_limited');
      expect(r.error?.retryAfter).toBe(3);
    }
  });

  it('a 200 whose results do not match the events is an unexpected_response for each', async () => {
    const { fetch } = answering(200, '{"results":[]}');
    const results = await herald(fetch).notifyMany([{ recipient: uuid(), payload: 1 }]);
    expect(results.map((r) => r.error?.code)).toEqual(['unexpected_response']);
  });

  it('rejects a call that could never succeed, sending nothing', async () => {
    const { fetch, calls } = answering(200, '{"results":[]}');
    const h = herald(fetch);
    await expect(h.notifyMany([])).rejects.toThrow(TypeError);
    await expect(h.notifyMany([{ recipient: 'nope', payload: 1 }])).rejects.toThrow(/UUID v4/);
    await expect(h.notifyMany([{ recipient: uuid(), payload: undefined }])).rejects.toThrow(
      /payload is required/,
    );
    expect(calls).toHaveLength(0);
  });
});
