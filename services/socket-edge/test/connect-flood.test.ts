import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  connectUrl,
  keys,
  type RunningEdge,
  type Stack,
  startEdge,
  startStack,
} from './fixture.js';

const RATE = 5;
const BURST = 10;
const FLOOD = 200;
const FLOODER = '127.0.0.2';
let stack: Stack;
let edge: RunningEdge;

beforeAll(async () => {
  stack = await startStack();
  // The failed-authentication limit off: the connect rate alone must hold the flood.
  edge = await startEdge(stack, {
    CONNECT_RATE_PER_S: String(RATE),
    CONNECT_BURST: String(BURST),
    AUTH_FAIL_LIMIT: '0',
  });
});
afterAll(async () => {
  await edge?.close();
  await edge?.nc.close();
  await stack?.stop();
});

/**
 * A connect from `localAddress`: 101 when it opened, else the upgrade's status and Retry-After,
 * or 0 when the edge dropped the connection at accept (an address already told 429).
 */
function attempt(opts: {
  apiKey?: string;
  localAddress: string;
  v1?: boolean;
}): Promise<{ status: number; retryAfter?: string; close?: { code: number; reason: string } }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(
      connectUrl(edge.port, { apiKey: opts.apiKey ?? keys.mobileA, recipient: randomUUID() }),
      opts.v1 ? ['herald.v1'] : [],
      { ca: stack.certs.ca, localAddress: opts.localAddress },
    );
    let opened = false;
    ws.on('open', () => {
      opened = true;
      if (!opts.v1) ws.close();
    });
    ws.on('close', (code, reason) => {
      if (opened) resolve({ status: 101, close: { code, reason: reason.toString() } });
    });
    ws.on('error', (err: NodeJS.ErrnoException) =>
      ['ECONNRESET', 'EPIPE'].includes(err.code ?? '') ||
      /socket hang up|disconnected/.test(err.message)
        ? resolve({ status: 0 })
        : reject(err),
    );
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: res.headers['retry-after'] as string | undefined,
        }),
      );
    });
  });
}

const badKey = () => `hk_live_${randomUUID().replaceAll('-', '')}`;

describe('/ws/connect under a flood of bad keys from one address', () => {
  it('refuses the flooding address 429 too_many_connects while another address is admitted', async () => {
    const flood = Array.from({ length: FLOOD }, () =>
      attempt({ apiKey: badKey(), localAddress: FLOODER }),
    );
    // A well-behaved client on another address, while the flood is in flight.
    const good = new WebSocket(
      connectUrl(edge.port, { apiKey: keys.mobileA, recipient: randomUUID() }),
      ['herald.v1'],
      { ca: stack.certs.ca, localAddress: '127.0.0.1' },
    );
    const admitted = await new Promise<boolean>((resolve) => {
      good.once('open', () => resolve(true));
      good.once('close', () => resolve(false));
      good.once('error', () => resolve(false));
    });
    expect(admitted).toBe(true);
    good.close();
    const outcomes = await Promise.all(flood);
    const byStatus = new Map<number, number>();
    for (const o of outcomes) byStatus.set(o.status, (byStatus.get(o.status) ?? 0) + 1);
    // Every flood connect was refused: 401 (its bad key was looked up), 429 (it cost no lookup)
    // or dropped at accept (0: the address had had its 429 and was still over its rate).
    expect([...byStatus.keys()].every((s) => [0, 401, 429].includes(s))).toBe(true);
    expect(byStatus.get(429)).toBeGreaterThan(0);
    // At most the burst plus what the rate refilled reached a key lookup; the rest were cut off.
    expect((byStatus.get(429) ?? 0) + (byStatus.get(0) ?? 0)).toBeGreaterThan(FLOOD / 2);
    const limited = outcomes.filter((o) => o.status === 429);
    expect(limited.every((o) => Number(o.retryAfter) >= 1)).toBe(true);
  });

  it('closes a herald.v1 connect from a flooding address with 4429 and the JSON reason with retry_after', async () => {
    // herald.v1 connects with bad keys until the address is over its rate: each is closed 4401
    // (looked up) until one is refused before the lookup. The bound is far past BURST + refills.
    let close: { code: number; reason: string } | undefined;
    for (let i = 0; i < 10 * BURST && close?.code !== 4429; i++) {
      const outcome = await attempt({ apiKey: badKey(), localAddress: '127.0.0.3', v1: true });
      close = outcome.close;
      if (outcome.status === 101) expect([4401, 4429]).toContain(close?.code);
    }
    expect(close?.code).toBe(4429);
    // The Retry-After seconds in-band, where a browser can read them (it cannot read headers).
    const reason = JSON.parse(close?.reason ?? '{}');
    expect(reason).toEqual({ code: 'too_many_connects', retry_after: reason.retry_after });
    expect(Number.isInteger(reason.retry_after) && reason.retry_after >= 1).toBe(true);
  });
});
