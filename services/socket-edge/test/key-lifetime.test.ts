import { randomUUID } from 'node:crypto';
import type { VerifiedKey } from '@herald/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  expectRefusal,
  openClient,
  type RunningEdge,
  type Stack,
  sendLive,
  sleep,
  startEdge,
  startStack,
  type TestClient,
  verified,
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

/** A key the in-test auth answers for; `account` defaults to a fresh one. */
function newKey(over: Partial<VerifiedKey> = {}): { apiKey: string; key: VerifiedKey } {
  const key = verified(`key-${randomUUID()}`, randomUUID(), 'mobile', null, null, over);
  const apiKey = `hk_${key.kind}_${randomUUID()}`;
  stack.auth.set(apiKey, key);
  return { apiKey, key };
}

async function open(edge: RunningEdge, apiKey: string, v1: boolean): Promise<TestClient> {
  const client = openClient(stack, edge.port, { apiKey, v1 });
  await client.opened;
  return client;
}

/** Resolves with the close, or rejects when the socket is still open after `ms`. */
function closedWithin(client: TestClient, ms: number) {
  return Promise.race([
    client.closed,
    sleep(ms).then(() => {
      throw new Error(`the socket was still open ${ms} ms later`);
    }),
  ]);
}

function errorFrame(client: TestClient) {
  return JSON.parse(client.frames[0] ?? '{}') as { type: string; error: { code: string } };
}

describe('a socket lives no longer than its key may be used', () => {
  it('closes at Test-key expiry: 4401 key_expired, herald.v1 clients getting the ErrorFrame first', async () => {
    const { apiKey } = newKey({ kind: 'test', expires_at: Date.now() + 1500 });
    const [v1, plain] = await Promise.all([open(edgeA, apiKey, true), open(edgeB, apiKey, false)]);
    const [v1Closed, plainClosed] = await Promise.all([v1.closed, plain.closed]);
    expect(v1Closed.code).toBe(4401);
    expect(JSON.parse(v1Closed.reason)).toEqual({ code: 'key_expired' });
    expect(errorFrame(v1)).toMatchObject({ type: 'error', error: { code: 'key_expired' } });
    expect(plainClosed.code).toBe(4401);
    expect(plain.frames).toEqual([]);
    expect(await expectRefusal(stack, edgeA.port, { apiKey })).toMatchObject({
      status: 401,
      body: { error: { code: 'key_expired' } },
    });
  });

  it("closes a Live key's sockets when the account's paid period ends: 4403 plan_inactive", async () => {
    const { apiKey } = newKey({ plan: 'hobby', plan_until: Date.now() + 1500 });
    const [v1, plain] = await Promise.all([open(edgeA, apiKey, true), open(edgeB, apiKey, false)]);
    const [v1Closed, plainClosed] = await Promise.all([v1.closed, plain.closed]);
    expect(v1Closed.code).toBe(4403);
    expect(JSON.parse(v1Closed.reason)).toEqual({ code: 'plan_inactive' });
    expect(errorFrame(v1)).toMatchObject({ type: 'error', error: { code: 'plan_inactive' } });
    expect(plainClosed.code).toBe(4403);
    const refusal = await expectRefusal(stack, edgeA.port, { apiKey });
    expect(refusal).toMatchObject({
      status: 403,
      body: { error: { code: 'plan_inactive', field: 'api_key' } },
    });
    expect((refusal.body as { error: { message: string } }).error.message).toMatch(/renew/);
  });

  it('keeps a socket open past the old period end when the plan is renewed (plan_changed)', async () => {
    const oldEnd = Date.now() + 1500;
    const { apiKey, key } = newKey({ plan: 'hobby', plan_until: oldEnd });
    const client = await open(edgeA, apiKey, true);
    stack.auth.set(apiKey, { ...key, plan_until: Date.now() + 3_600_000 });
    await stack.auth.invalidate({ v: 1, account_id: key.account_id, reason: 'plan_changed' });
    await sleep(oldEnd - Date.now() + 500);
    expect(client.ws.readyState).toBe(client.ws.OPEN);
    const recipient = new URL(client.ws.url).searchParams.get('recipient') ?? '';
    expect(await sendLive(stack.nc, key.account_id, recipient, '"renewed"')).toEqual({
      v: 1,
      sockets: 1,
    });
    client.ws.close();
  });
});

describe('invalidation broadcasts close sockets on every edge within 2 s', () => {
  it('revoked: both edges close the key’s sockets with 4401, leaving other keys’ sockets open', async () => {
    const { apiKey, key } = newKey({ account_id: ACCOUNT_A });
    const onA = await open(edgeA, apiKey, true);
    const onB = await open(edgeB, apiKey, false);
    const bystander = await open(edgeB, newKey({ account_id: ACCOUNT_A }).apiKey, false);
    await stack.auth.revoke(apiKey, key.id);
    const [a, b] = await Promise.all([closedWithin(onA, 2000), closedWithin(onB, 2000)]);
    expect(a.code).toBe(4401);
    expect(errorFrame(onA).error.code).toBe('key_revoked');
    expect(b.code).toBe(4401);
    expect(bystander.ws.readyState).toBe(bystander.ws.OPEN);
    bystander.ws.close();
  });

  it('reset: the old Test key’s sockets close with 4401 on both edges', async () => {
    const { apiKey, key } = newKey({ kind: 'test', expires_at: Date.now() + 3_600_000 });
    const onA = await open(edgeA, apiKey, false);
    const onB = await open(edgeB, apiKey, true);
    stack.auth.refuse(apiKey, 'key_revoked');
    await stack.auth.invalidate({
      v: 1,
      key_id: key.id,
      account_id: key.account_id,
      reason: 'reset',
    });
    const [a, b] = await Promise.all([closedWithin(onA, 2000), closedWithin(onB, 2000)]);
    expect([a.code, b.code]).toEqual([4401, 4401]);
  });

  it('plan_changed to a lapsed plan: the account’s Live-key sockets close with 4403 on both edges', async () => {
    const { apiKey, key } = newKey({ plan: 'hobby', plan_until: Date.now() + 3_600_000 });
    const onA = await open(edgeA, apiKey, true);
    const onB = await open(edgeB, apiKey, false);
    stack.auth.refuse(apiKey, 'plan_inactive');
    await stack.auth.invalidate({ v: 1, account_id: key.account_id, reason: 'plan_changed' });
    const [a, b] = await Promise.all([closedWithin(onA, 2000), closedWithin(onB, 2000)]);
    expect(a.code).toBe(4403);
    expect(JSON.parse(a.reason)).toEqual({ code: 'plan_inactive' });
    expect(b.code).toBe(4403);
  });
});

describe('Origin on the upgrade of a web key', () => {
  const DOMAIN = 'https://example.com';
  let apiKey: string;
  beforeAll(() => {
    apiKey = `hk_live_${randomUUID()}`;
    stack.auth.set(apiKey, verified(`key-${randomUUID()}`, ACCOUNT_A, 'web', DOMAIN));
  });

  it('accepts the exact registered origin', async () => {
    const client = openClient(stack, edgeA.port, { apiKey, client: 'web', origin: DOMAIN });
    await client.opened;
    client.ws.close();
  });

  const refused: Array<[string, string | undefined]> = [
    ['another origin', 'https://other.example.org'],
    ['no Origin', undefined],
    ['another scheme', 'http://example.com'],
    ['another port', 'https://example.com:8443'],
    ['a look-alike prefix', 'https://evil-example.com'],
    ['the domain as a prefix of another', 'https://example.com.evil.io'],
  ];
  for (const [name, origin] of refused) {
    it(`refuses ${name} with 403 origin_mismatch (4403 for herald.v1)`, async () => {
      const opts = { apiKey, client: 'web', ...(origin ? { origin } : {}) };
      expect(await expectRefusal(stack, edgeA.port, opts)).toMatchObject({
        status: 403,
        body: { error: { code: 'origin_mismatch', field: 'Origin' } },
      });
      const v1 = openClient(stack, edgeB.port, { ...opts, v1: true });
      expect((await v1.closed).code).toBe(4403);
    });
  }

  it('asks no Origin of a mobile key', async () => {
    const client = openClient(stack, edgeA.port, { apiKey: newKey().apiKey });
    await client.opened;
    client.ws.close();
  });
});
