import { randomUUID } from 'node:crypto';
import type { KeyKind } from '@herald/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTIONS_BUCKET } from '../src/admit/connection-counts.js';
import {
  expectRefusal,
  openClient,
  ROOMY_LIMITS,
  type RunningEdge,
  type Stack,
  startEdge,
  startStack,
  type TestClient,
  verified,
  waitUntil,
} from './fixture.js';

let stack: Stack;
let edgeA: RunningEdge;
let edgeB: RunningEdge;

beforeAll(async () => {
  stack = await startStack();
  [edgeA, edgeB] = await Promise.all([startEdge(stack), startEdge(stack)]);
});

afterAll(async () => {
  await Promise.all([edgeA?.close(), edgeB?.close()]);
  await stack?.stop();
});

/** A fresh account with one key capped at `connections` concurrent sockets. */
function cappedKey(connections: number, kind: KeyKind = 'live', account = randomUUID()) {
  const apiKey = `hk_${kind}_${randomUUID()}`;
  stack.auth.set(
    apiKey,
    verified(`key-${randomUUID()}`, account, 'mobile', null, null, {
      kind,
      limits: { ...ROOMY_LIMITS, connections },
    }),
  );
  return { apiKey, account };
}

function seen(edge: RunningEdge, account: string, n: number, kind: KeyKind = 'live') {
  return waitUntil(
    `edge ${edge.edge.id} to count ${n} sockets`,
    () => edge.edge.connectionsSeen(account, kind) === n,
  );
}

async function open(edge: RunningEdge, apiKey: string, v1 = false): Promise<TestClient> {
  const client = openClient(stack, edge.port, { apiKey, v1 });
  await client.opened;
  return client;
}

describe('the per-account connection cap across two edges', () => {
  it('keeps the counts in a KV bucket holding one value per key, with the TTL', async () => {
    const { config } = await stack.jsm.streams.info(`KV_${CONNECTIONS_BUCKET}`);
    expect(config.max_age).toBe(30_000 * 1_000_000);
    expect(config.max_msgs_per_subject).toBe(1);
  });

  it('refuses the N+1th connection with 429 (plain) or 4429 (herald.v1), and admits again after a close', async () => {
    const { apiKey, account } = cappedKey(3);
    const a1 = await open(edgeA, apiKey);
    const b1 = await open(edgeB, apiKey, true);
    const a2 = await open(edgeA, apiKey);
    await Promise.all([seen(edgeA, account, 3), seen(edgeB, account, 3)]);

    const plain = await expectRefusal(stack, edgeB.port, { apiKey });
    expect(plain).toMatchObject({
      status: 429,
      body: { error: { code: 'connection_limit', field: 'api_key' } },
    });
    expect((plain.body as { error: { message: string } }).error.message).toMatch(
      /allows 3 concurrent connections and 3 are open/,
    );
    const v1 = openClient(stack, edgeA.port, { apiKey, v1: true });
    const closed = await v1.closed;
    expect(closed.code).toBe(4429);
    expect(JSON.parse(closed.reason)).toEqual({ code: 'connection_limit' });
    expect(JSON.parse(v1.frames[0] ?? '{}')).toMatchObject({
      type: 'error',
      error: { code: 'connection_limit' },
    });
    // Refused connects are not counted.
    expect(edgeA.edge.connectionsSeen(account)).toBe(3);

    b1.ws.close();
    await Promise.all([seen(edgeA, account, 2), seen(edgeB, account, 2)]);
    const a3 = await open(edgeA, apiKey);
    await seen(edgeB, account, 3);
    expect((await expectRefusal(stack, edgeB.port, { apiKey })).status).toBe(429);
    for (const c of [a1, a2, a3]) c.ws.close();
    await Promise.all([seen(edgeA, account, 0), seen(edgeB, account, 0)]);
  });

  it("counts the Test key's sockets apart from the Live keys', each against its own cap", async () => {
    const live = cappedKey(1);
    const test = cappedKey(2, 'test', live.account);
    const l1 = await open(edgeA, live.apiKey);
    const t1 = await open(edgeB, test.apiKey);
    const t2 = await open(edgeA, test.apiKey);
    await Promise.all([seen(edgeB, live.account, 1), seen(edgeB, live.account, 2, 'test')]);
    expect((await expectRefusal(stack, edgeB.port, { apiKey: live.apiKey })).status).toBe(429);
    const refused = await expectRefusal(stack, edgeB.port, { apiKey: test.apiKey });
    expect(refused.status).toBe(429);
    expect((refused.body as { error: { message: string } }).error.message).toMatch(/Test key/);
    for (const c of [l1, t1, t2]) c.ws.close();
  });

  it('keeps a burst of simultaneous connects spread over both edges within edges × cap, then holds the cap exactly', async () => {
    const CAP = 5;
    const PER_EDGE = 12;
    const { apiKey, account } = cappedKey(CAP);
    const attempts = [edgeA, edgeB].flatMap((edge) =>
      Array.from({ length: PER_EDGE }, () => openClient(stack, edge.port, { apiKey })),
    );
    const outcomes = await Promise.all(
      attempts.map((c) =>
        c.opened.then(
          () => 'open' as const,
          () => 'refused' as const,
        ),
      ),
    );
    const admitted = attempts.filter((_, i) => outcomes[i] === 'open');
    // Each edge counts its own admissions exactly, so neither admits more than the cap; the
    // overshoot comes only from connects the other edge admitted within one propagation delay.
    expect(admitted.length).toBeGreaterThanOrEqual(CAP);
    expect(admitted.length).toBeLessThanOrEqual(2 * CAP);
    await Promise.all([
      seen(edgeA, account, admitted.length),
      seen(edgeB, account, admitted.length),
    ]);
    expect((await expectRefusal(stack, edgeA.port, { apiKey })).status).toBe(429);
    for (const c of admitted) c.ws.close();
    await Promise.all([seen(edgeA, account, 0), seen(edgeB, account, 0)]);
    (await open(edgeB, apiKey)).ws.close();
  });

  it("drops a gracefully closed edge's sockets from the count at once, not after the TTL", async () => {
    const { apiKey, account } = cappedKey(2);
    const leaving = await startEdge(stack);
    await open(leaving, apiKey);
    await open(leaving, apiKey);
    await seen(edgeA, account, 2);
    expect((await expectRefusal(stack, edgeA.port, { apiKey })).status).toBe(429);
    await leaving.close();
    // Well inside the 30 s TTL: the closing edge deleted its keys.
    await waitUntil('the count to drop', () => edgeA.edge.connectionsSeen(account) === 0, 5000);
    (await open(edgeA, apiKey)).ws.close();
  });
});
