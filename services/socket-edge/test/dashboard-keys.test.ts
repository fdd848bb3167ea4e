import { randomUUID } from 'node:crypto';
import { dashboardRecipient, type VerifiedKey } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import {
  expectRefusal,
  openClient,
  ROOMY_LIMITS,
  type RunningEdge,
  type Stack,
  sendLive,
  type TestClient,
  useEdgeStack,
  verified,
  WEB_ORIGIN,
  waitUntil,
} from './fixture.js';

/**
 * The dashboard's own credential (`hk_dash_`) at the edge: it opens its account's dashboard
 * recipient and nothing else, customer keys may not open that recipient, its sockets count in a
 * pool of their own, and it dies at its expiry. Auth is the fixture's responder on the real
 * nats-server, answering as auth does for a dashboard credential.
 */
let stack: Stack;
let edge: RunningEdge;

useEdgeStack(
  (started) => {
    ({ stack, edge } = started);
  },
  { KEY_CACHE_TTL_MS: '0' },
);

/** A new account with a dashboard listener (and sender) and a Live key, as auth would verify them. */
function account(
  opts: { dashboardConnections?: number; liveConnections?: number; expiresAt?: number } = {},
) {
  const id = randomUUID();
  const recipient = dashboardRecipient(id);
  const dash = (role: 'listen' | 'send'): VerifiedKey =>
    verified(
      `dash-${randomUUID()}`,
      id,
      role === 'listen' ? 'web' : 'mobile',
      role === 'listen' ? WEB_ORIGIN : null,
      opts.expiresAt ?? Date.now() + 3600_000,
      {
        kind: 'dashboard',
        dashboard: { role, recipient },
        limits: { ...ROOMY_LIMITS, connections: opts.dashboardConnections ?? 5 },
      },
    );
  const listener = `hk_dash_${randomUUID().replaceAll('-', '')}`;
  const sender = `hk_dash_${randomUUID().replaceAll('-', '')}`;
  const live = `hk_live_${randomUUID().replaceAll('-', '')}`;
  stack.auth.set(listener, dash('listen'));
  stack.auth.set(sender, dash('send'));
  stack.auth.set(
    live,
    verified(`live-${randomUUID()}`, id, 'mobile', null, null, {
      limits: { ...ROOMY_LIMITS, connections: opts.liveConnections ?? 10 },
    }),
  );
  return { id, recipient, listener, sender, live };
}

async function openListener(apiKey: string, recipient: string, v1 = true): Promise<TestClient> {
  const client = openClient(stack, edge.port, {
    apiKey,
    recipient,
    client: 'web',
    origin: WEB_ORIGIN,
    v1,
  });
  await client.opened;
  return client;
}

describe('a dashboard listener', () => {
  it("opens its account's dashboard recipient and receives what is sent there", async () => {
    const a = account();
    const client = await openListener(a.listener, a.recipient);
    const reply = await sendLive(
      stack.nc,
      a.id,
      a.recipient,
      '{"type":"payment","status":"succeeded"}',
    );
    expect(reply).toMatchObject({ sockets: 1 });
    await waitUntil('the notice on the dashboard socket', () => client.events.length === 1);
    expect(client.events[0]?.payload).toEqual({ type: 'payment', status: 'succeeded' });
    client.ws.close();
  });

  it("is refused (403) on any other recipient, including another account's dashboard recipient", async () => {
    const a = account();
    const b = account();
    for (const recipient of [randomUUID(), b.recipient]) {
      const refusal = await expectRefusal(stack, edge.port, {
        apiKey: a.listener,
        recipient,
        client: 'web',
        origin: WEB_ORIGIN,
      });
      expect(refusal).toMatchObject({
        status: 403,
        body: { error: { code: 'dashboard_key_scope', field: 'recipient' } },
      });
    }
  });

  it('is refused from another Origin than the dashboard it was minted for', async () => {
    const a = account();
    const refusal = await expectRefusal(stack, edge.port, {
      apiKey: a.listener,
      recipient: a.recipient,
      client: 'web',
      origin: 'https://evil.example.com',
    });
    expect(refusal).toMatchObject({ status: 403, body: { error: { code: 'origin_mismatch' } } });
  });

  it('is closed with 4401 at its expiry', async () => {
    const a = account({ expiresAt: Date.now() + 1500 });
    const client = await openListener(a.listener, a.recipient);
    const closed = await client.closed;
    expect(closed.code).toBe(4401);
    expect(JSON.parse(closed.reason)).toMatchObject({ code: 'key_expired' });
  });
});

describe('what else may not use the dashboard recipient', () => {
  it("refuses a customer's Live key on its own account's dashboard recipient (403 reserved_recipient)", async () => {
    const a = account();
    const refusal = await expectRefusal(stack, edge.port, {
      apiKey: a.live,
      recipient: a.recipient,
    });
    expect(refusal).toMatchObject({
      status: 403,
      body: { error: { code: 'reserved_recipient', field: 'recipient' } },
    });
  });

  it("refuses auth's sender credential on a socket", async () => {
    const a = account();
    const refusal = await expectRefusal(stack, edge.port, {
      apiKey: a.sender,
      recipient: a.recipient,
    });
    expect(refusal).toMatchObject({
      status: 403,
      body: { error: { code: 'dashboard_key_scope' } },
    });
  });
});

describe('the dashboard connection pool', () => {
  it("counts dashboard sockets apart from the plan's, capped by the credential's own limit", async () => {
    const a = account({ dashboardConnections: 2, liveConnections: 1 });
    const live = openClient(stack, edge.port, { apiKey: a.live });
    await live.opened;
    const tabs = [
      await openListener(a.listener, a.recipient),
      await openListener(a.listener, a.recipient, false),
    ];
    await waitUntil(
      'the pools to be counted',
      () =>
        edge.edge.connectionsSeen(a.id, 'live') === 1 &&
        edge.edge.connectionsSeen(a.id, 'dashboard') === 2,
    );
    const third = await expectRefusal(stack, edge.port, {
      apiKey: a.listener,
      recipient: a.recipient,
      client: 'web',
      origin: WEB_ORIGIN,
    });
    expect(third).toMatchObject({ status: 429, body: { error: { code: 'connection_limit' } } });
    expect((third.body as { error: { message: string } }).error.message).toMatch(
      /dashboard may hold 2 live connections/,
    );
    // The plan's single connection is still the customer's alone: the dashboard took none of it.
    expect(edge.edge.connectionsSeen(a.id, 'live')).toBe(1);
    for (const c of [live, ...tabs]) c.ws.close();
    await waitUntil(
      'the pools to empty',
      () =>
        edge.edge.connectionsSeen(a.id, 'live') === 0 &&
        edge.edge.connectionsSeen(a.id, 'dashboard') === 0,
    );
  });
});
