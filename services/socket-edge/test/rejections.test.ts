import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CloseCodes, HeraldError, type VerifiedKey } from '@herald/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionGate } from '../src/admit/connection-gate.js';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  expectRefusal,
  keys,
  metric,
  openClient,
  type RunningEdge,
  type Stack,
  sendLive,
  sleep,
  startEdge,
  startStack,
  verified,
  WEB_ORIGIN,
  waitUntil,
} from './fixture.js';

let stack: Stack;
let edge: RunningEdge;

beforeAll(async () => {
  stack = await startStack();
  // No verification cache, so tests that change what auth answers see it at once.
  edge = await startEdge(stack, { KEY_CACHE_TTL_MS: '0' });
});

afterAll(async () => {
  await edge?.close();
  await stack?.stop();
});

/** A herald.v1 connect that the edge refuses: the ErrorFrame it sent, and the close code and reason. */
async function v1Refusal(port: number, opts: Parameters<typeof openClient>[2]) {
  const client = openClient(stack, port, { ...opts, v1: true });
  const closed = await client.closed;
  expect(client.ws.protocol).toBe('herald.v1');
  expect(client.frames).toHaveLength(1);
  return {
    frame: JSON.parse(client.frames[0] ?? '{}') as {
      type: string;
      error: { code: string; field?: string; message: string };
    },
    ...closed,
  };
}

describe('bad parameters', () => {
  const recipient = randomUUID();
  const cases = [
    {
      name: 'recipient missing',
      query: `api_key=${keys.mobileA}&client=mobile`,
      status: 400,
      code: 'missing_field',
      field: 'recipient',
    },
    {
      name: 'recipient not a UUID v4',
      query: `api_key=${keys.mobileA}&client=mobile&recipient=123`,
      status: 400,
      code: 'invalid_recipient',
      field: 'recipient',
    },
    {
      name: 'client neither web nor mobile',
      query: `api_key=${keys.mobileA}&client=tv&recipient=${recipient}`,
      status: 400,
      code: 'invalid_client',
      field: 'client',
    },
    {
      name: 'client missing',
      query: `api_key=${keys.mobileA}&recipient=${recipient}`,
      status: 400,
      code: 'missing_field',
      field: 'client',
    },
    {
      name: 'api_key missing',
      query: `client=mobile&recipient=${recipient}`,
      status: 401,
      code: 'missing_api_key',
      field: 'api_key',
    },
  ];

  for (const c of cases) {
    it(`plain: ${c.name} → HTTP ${c.status} naming the field`, async () => {
      const refusal = await expectRefusal(stack, edge.port, { query: c.query });
      expect(refusal.status).toBe(c.status);
      expect(refusal.body).toMatchObject({ error: { code: c.code, field: c.field } });
      expect((refusal.body as { error: { message: string } }).error.message).toMatch(
        new RegExp(c.field),
      );
    });
  }

  it('herald.v1: an ErrorFrame, then close 4400 with the code as reason', async () => {
    const refusal = await v1Refusal(edge.port, {
      query: `api_key=${keys.mobileA}&client=mobile&recipient=nope`,
    });
    expect(refusal.frame).toMatchObject({
      type: 'error',
      error: { code: 'invalid_recipient', field: 'recipient' },
    });
    expect(refusal.code).toBe(4400);
    expect(JSON.parse(refusal.reason)).toEqual({ code: 'invalid_recipient' });
  });

  it('herald.v1: a missing api_key closes with 4401', async () => {
    const refusal = await v1Refusal(edge.port, {
      query: `client=mobile&recipient=${randomUUID()}`,
    });
    expect(refusal.frame.error.code).toBe('missing_api_key');
    expect(refusal.code).toBe(4401);
  });

  it('accepts a recipient in upper case and delivers to its lower-case subject', async () => {
    const lower = randomUUID();
    const client = openClient(stack, edge.port, { recipient: lower.toUpperCase() });
    await client.opened;
    expect(await sendLive(stack.nc, ACCOUNT_A, lower, '"hi"')).toEqual({ v: 1, sockets: 1 });
    client.ws.close();
  });

  it('answers 404 for an upgrade on another path', async () => {
    const refusal = await expectRefusal(stack, edge.port, { path: '/ws/other' });
    expect(refusal).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });
});

describe('keys', () => {
  it('refuses an unknown key: 401 plain, 4401 herald.v1', async () => {
    const plain = await expectRefusal(stack, edge.port, { apiKey: keys.unknown });
    expect(plain).toMatchObject({
      status: 401,
      body: { error: { code: 'invalid_api_key', field: 'api_key' } },
    });
    const v1 = await v1Refusal(edge.port, { apiKey: keys.unknown });
    expect(v1.code).toBe(4401);
    expect(v1.frame.error.code).toBe('invalid_api_key');
    expect(
      metric(
        await edge.metrics(),
        'herald_socket_rejections_total{code="invalid_api_key",service="socket-edge"}',
      ),
    ).toBe(2);
  });

  it('refuses a web key from another Origin: 403 plain, 4403 herald.v1; accepts it from its domain', async () => {
    const opts = { apiKey: keys.webA, client: 'web', origin: 'https://evil.example.com' };
    const plain = await expectRefusal(stack, edge.port, opts);
    expect(plain).toMatchObject({
      status: 403,
      body: { error: { code: 'origin_mismatch', field: 'Origin' } },
    });
    const v1 = await v1Refusal(edge.port, opts);
    expect(v1.code).toBe(4403);
    expect(v1.frame.error.code).toBe('origin_mismatch');
    const noOrigin = await expectRefusal(stack, edge.port, { apiKey: keys.webA, client: 'web' });
    expect(noOrigin.status).toBe(403);
    const ok = openClient(stack, edge.port, {
      apiKey: keys.webA,
      client: 'web',
      origin: WEB_ORIGIN,
    });
    await ok.opened;
    ok.ws.close();
  });

  it('refuses a key used with the other client type (403 client_mismatch)', async () => {
    const refusal = await expectRefusal(stack, edge.port, {
      apiKey: keys.mobileA,
      client: 'web',
      origin: WEB_ORIGIN,
    });
    expect(refusal).toMatchObject({
      status: 403,
      body: { error: { code: 'client_mismatch', field: 'client' } },
    });
  });

  it('answers 503 / 4503 when auth cannot verify the key', async () => {
    const apiKey = `hk_live_${randomUUID()}`;
    stack.auth.refuse(apiKey, 'internal');
    expect(await expectRefusal(stack, edge.port, { apiKey })).toMatchObject({
      status: 503,
      body: { error: { code: 'unavailable' } },
    });
    expect((await v1Refusal(edge.port, { apiKey })).code).toBe(4503);
  });

  it('closes open sockets with 4401 when their key is revoked, and only those', async () => {
    const apiKey = `hk_live_${randomUUID()}`;
    stack.auth.set(apiKey, verified('key-revocable', ACCOUNT_A, 'mobile', null));
    const recipient = randomUUID();
    const v1 = openClient(stack, edge.port, { apiKey, recipient, v1: true });
    const plain = openClient(stack, edge.port, { apiKey, recipient });
    const bystander = openClient(stack, edge.port, { recipient });
    await Promise.all([v1.opened, plain.opened, bystander.opened]);

    await stack.auth.revoke(apiKey, 'key-revocable');
    const [v1Closed, plainClosed] = await Promise.all([v1.closed, plain.closed]);
    expect(v1Closed.code).toBe(4401);
    expect(JSON.parse(v1Closed.reason)).toEqual({ code: 'key_revoked' });
    expect(v1.frames.map((f) => JSON.parse(f))).toEqual([
      { type: 'error', error: expect.objectContaining({ code: 'key_revoked' }) },
    ]);
    expect(plainClosed.code).toBe(4401);
    expect(plain.frames).toEqual([]);
    // The other key's socket of the same recipient still receives.
    expect(await sendLive(stack.nc, ACCOUNT_A, recipient, '"still here"')).toEqual({
      v: 1,
      sockets: 1,
    });
    await waitUntil('the bystander frame', () => bystander.frames.length === 1);
    bystander.ws.close();
  });

  it("closes a web socket with 4403 when its key's domain changes to another Origin", async () => {
    const apiKey = `hk_live_${randomUUID()}`;
    stack.auth.set(apiKey, verified('key-web-moving', ACCOUNT_A, 'web', WEB_ORIGIN));
    const client = openClient(stack, edge.port, {
      apiKey,
      client: 'web',
      origin: WEB_ORIGIN,
      v1: true,
    });
    await client.opened;
    stack.auth.set(apiKey, verified('key-web-moving', ACCOUNT_A, 'web', 'https://new.example.com'));
    await stack.auth.invalidate({ v: 1, key_id: 'key-web-moving', reason: 'domain_changed' });
    const closed = await client.closed;
    expect(closed.code).toBe(4403);
    expect(JSON.parse(closed.reason)).toEqual({ code: 'origin_mismatch' });
  });

  it('refuses an expired key, and closes a socket with 4401 when its key expires', async () => {
    const expired = `hk_test_${randomUUID()}`;
    stack.auth.set(expired, {
      ...verified('key-expired', ACCOUNT_A, 'mobile', null),
      kind: 'test',
      expires_at: Date.now() - 1,
    });
    expect(await expectRefusal(stack, edge.port, { apiKey: expired })).toMatchObject({
      status: 401,
      body: { error: { code: 'key_expired' } },
    });

    const expiring = `hk_test_${randomUUID()}`;
    stack.auth.set(expiring, {
      ...verified('key-expiring', ACCOUNT_A, 'mobile', null),
      kind: 'test',
      expires_at: Date.now() + 400,
    });
    const client = openClient(stack, edge.port, { apiKey: expiring, v1: true });
    await client.opened;
    const closed = await client.closed;
    expect(closed.code).toBe(4401);
    expect(JSON.parse(closed.reason)).toEqual({ code: 'key_expired' });
  });
});

describe('limits', () => {
  it('holds at most MAX_SOCKETS sockets: the next gets 503 / 4503 until one closes', async () => {
    const small = await startEdge(stack, { MAX_SOCKETS: '2' });
    try {
      const a = openClient(stack, small.port);
      const b = openClient(stack, small.port, { v1: true });
      await Promise.all([a.opened, b.opened]);
      expect(await expectRefusal(stack, small.port)).toMatchObject({
        status: 503,
        body: { error: { code: 'unavailable' } },
      });
      expect((await v1Refusal(small.port, {})).code).toBe(4503);
      a.ws.close();
      await a.closed;
      await waitUntil(
        'the slot to free',
        async () =>
          metric(
            await small.metrics(),
            'herald_open_sockets{framing="plain",service="socket-edge"}',
          ) === 0,
      );
      const c = openClient(stack, small.port);
      await c.opened;
      b.ws.close();
      c.ws.close();
    } finally {
      await small.close();
    }
  });

  it('asks the connection gate, answering 429 / 4429 when it refuses, and releases what it admitted', async () => {
    const admitted: string[] = [];
    const released: string[] = [];
    const gate: ConnectionGate = {
      admit(key: VerifiedKey, recipient: string) {
        if (key.account_id === ACCOUNT_B)
          throw new HeraldError(
            'connection_limit',
            'account B is at its plan cap: close a socket or upgrade',
          );
        admitted.push(recipient);
      },
      release(_key: VerifiedKey, recipient: string) {
        released.push(recipient);
      },
    };
    const gated = await startEdge(stack, {}, { gate });
    try {
      const refused = await expectRefusal(stack, gated.port, { apiKey: keys.mobileB });
      expect(refused).toMatchObject({ status: 429, body: { error: { code: 'connection_limit' } } });
      expect((await v1Refusal(gated.port, { apiKey: keys.mobileB })).code).toBe(4429);
      const recipient = randomUUID();
      const ok = openClient(stack, gated.port, { recipient });
      await ok.opened;
      expect(admitted).toEqual([recipient]);
      ok.ws.close();
      await waitUntil('the release', () => released.length === 1);
      expect(released).toEqual([recipient]);
    } finally {
      await gated.close();
    }
  });

  it('takes client frames up to MAX_CLIENT_FRAME_BYTES and closes with 1009 beyond', async () => {
    const client = openClient(stack, edge.port, { v1: true });
    await client.opened;
    client.ws.send('x'.repeat(8192));
    await sleep(50);
    expect(client.ws.readyState).toBe(client.ws.OPEN);
    client.ws.send('x'.repeat(8193));
    expect((await client.closed).code).toBe(CloseCodes.messageTooBig);
  });

  it('documents the oversized-frame close in docs/api.md with the code it sends (1009, RFC 6455)', () => {
    const api = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
    const row = api.split('\n').find((l) => /^\| \d{4} \|.*MAX_CLIENT_FRAME_BYTES/.test(l));
    expect(row?.slice(2, 6)).toBe(String(CloseCodes.messageTooBig));
  });

  it('ignores and counts malformed herald.v1 frames, keeping the socket open', async () => {
    const series = 'herald_malformed_client_frames_total{service="socket-edge"}';
    const before = metric(await edge.metrics(), series);
    const client = openClient(stack, edge.port, { v1: true });
    await client.opened;
    client.ws.send('not json');
    client.ws.send('{"type":"ack"}');
    client.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    client.ws.send('{"type":"ack","id":"unknown-id"}');
    await waitUntil(
      'three counted',
      async () => metric(await edge.metrics(), series) === before + 3,
    );
    expect(client.ws.readyState).toBe(client.ws.OPEN);
    client.ws.close();
  });
});
