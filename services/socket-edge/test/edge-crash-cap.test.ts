import { randomUUID } from 'node:crypto';
import type { ServiceProcess } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectRefusal,
  openClient,
  ROOMY_LIMITS,
  type RunningEdge,
  type Stack,
  startEdge,
  startEdgeProcess,
  startStack,
  type TestClient,
  verified,
  waitUntil,
} from './fixture.js';

// Issue 10, finding D: an account at its connection cap whose edge was killed must be able to
// reconnect within 2 s of the edge restarting (or of reaching another edge), while the cap stays
// exact. Every edge runs the production settings (30 s count TTL, default heartbeats), which used
// to lock the account out for the whole TTL.

let stack: Stack;
let survivor: RunningEdge;
const running: ServiceProcess[] = [];

const startProcessEdge = async (port?: number): Promise<ServiceProcess> => {
  const edge = await startEdgeProcess(stack, port);
  running.push(edge);
  return edge;
};

beforeAll(async () => {
  stack = await startStack();
  survivor = await startEdge(stack);
});

afterAll(async () => {
  for (const edge of running) await edge.stop('SIGKILL');
  await survivor?.close();
  await stack?.stop();
});

/** A fresh account whose key allows `cap` sockets. */
function cappedKey(cap: number): { account: string; apiKey: string } {
  const account = randomUUID();
  const apiKey = `hk_live_${randomUUID()}`;
  stack.auth.set(
    apiKey,
    verified(`key-${randomUUID()}`, account, 'mobile', null, null, {
      limits: { ...ROOMY_LIMITS, connections: cap },
    }),
  );
  return { account, apiKey };
}

/** Opens sockets on `port` until one opens; resolves with it and how long that took, ms. */
async function reconnect(
  port: number,
  apiKey: string,
): Promise<{ client: TestClient; ms: number }> {
  const started = Date.now();
  for (;;) {
    const client = openClient(stack, port, { apiKey });
    const outcome = await Promise.race([
      client.opened.then(
        () => 'open' as const,
        () => 'refused' as const,
      ),
      client.closed.then(() => 'refused' as const),
    ]);
    if (outcome === 'open') return { client, ms: Date.now() - started };
    if (Date.now() - started > 10_000) throw new Error('no reconnect within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a capped account whose edge was killed with -9', () => {
  it('reconnects through another edge at once, and the cap stays exact', async () => {
    const { account, apiKey } = cappedKey(2);
    const doomed = await startProcessEdge();
    const held = [
      openClient(stack, doomed.port, { apiKey }),
      openClient(stack, doomed.port, { apiKey }),
    ];
    await Promise.all(held.map((c) => c.opened));
    await waitUntil(
      'the survivor to count them',
      () => survivor.edge.connectionsSeen(account) === 2,
    );
    expect((await expectRefusal(stack, survivor.port, { apiKey })).status).toBe(429);

    await doomed.stop('SIGKILL');
    await Promise.all(held.map((c) => c.closed));
    const first = await reconnect(survivor.port, apiKey);
    const second = await reconnect(survivor.port, apiKey);
    console.info(`finding D (another edge): reconnected ${first.ms} ms after the kill was seen`);
    expect((await expectRefusal(stack, survivor.port, { apiKey })).status).toBe(429);
    first.client.ws.close();
    second.client.ws.close();
  }, 30_000);

  it('reconnects through the restarted edge at once, and the cap stays exact', async () => {
    const { account, apiKey } = cappedKey(2);
    const doomed = await startProcessEdge();
    const held = [
      openClient(stack, doomed.port, { apiKey }),
      openClient(stack, doomed.port, { apiKey }),
    ];
    await Promise.all(held.map((c) => c.opened));

    await doomed.stop('SIGKILL');
    await Promise.all(held.map((c) => c.closed));
    const restarted = await startProcessEdge(doomed.port);
    const first = await reconnect(restarted.port, apiKey);
    const second = await reconnect(restarted.port, apiKey);
    console.info(
      `finding D (restart): reconnected ${first.ms} ms after the restarted edge was ready`,
    );
    expect((await expectRefusal(stack, restarted.port, { apiKey })).status).toBe(429);
    await waitUntil(
      'the survivor to count them',
      () => survivor.edge.connectionsSeen(account) === 2,
    );
    expect((await expectRefusal(stack, survivor.port, { apiKey })).status).toBe(429);
    first.client.ws.close();
    second.client.ws.close();
  }, 30_000);
});
