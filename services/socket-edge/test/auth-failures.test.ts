import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connectUrl, type RunningEdge, type Stack, startEdge, startStack } from './fixture.js';

const LIMIT = 2;
let stack: Stack;
let edge: RunningEdge;

beforeAll(async () => {
  stack = await startStack();
  edge = await startEdge(stack, { AUTH_FAIL_LIMIT: String(LIMIT), AUTH_FAIL_WINDOW_MS: '600000' });
});
afterAll(async () => {
  await edge?.close();
  await edge?.nc.close();
  await stack?.stop();
});

interface Outcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: { error?: { code: string; field?: string } };
}

/** A plain connect from `localAddress`: the upgrade's HTTP refusal, or status 101 when it opened. */
function attempt(opts: {
  query?: string;
  apiKey?: string;
  localAddress: string;
}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(connectUrl(edge.port, opts), [], {
      ca: stack.certs.ca,
      localAddress: opts.localAddress,
    });
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101, headers: {}, body: {} });
    });
    ws.on('error', reject);
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }),
      );
    });
  });
}

const unknownKey = () => `hk_live_${randomUUID().replaceAll('-', '')}`;

describe('/ws/connect under bad keys', () => {
  it('answers an empty or repeated api_key with 401 invalid_api_key, like /notify', async () => {
    const q = (k: string) => `${k}&recipient=${randomUUID()}&client=mobile`;
    for (const query of [q('api_key='), q('api_key=hk_live_a&api_key=hk_live_b')]) {
      const res = await attempt({ query, localAddress: '127.0.0.51' });
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ code: 'invalid_api_key', field: 'api_key' });
    }
  });

  it(`refuses a source with 403 auth_failures and Retry-After after ${LIMIT} failed upgrades`, async () => {
    const source = '127.0.0.52';
    expect((await attempt({ apiKey: unknownKey(), localAddress: source })).status).toBe(401);
    // One failure short of the limit, a valid key still connects.
    expect((await attempt({ localAddress: source })).status).toBe(101);
    expect((await attempt({ apiKey: unknownKey(), localAddress: source })).status).toBe(401);
    const refused = await attempt({ localAddress: source });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'auth_failures', field: 'api_key' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another source is not affected.
    expect((await attempt({ localAddress: '127.0.0.53' })).status).toBe(101);
  });
});
