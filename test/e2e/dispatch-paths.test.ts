import { subjects } from '@herald/proto';
import { post, type TestSocket } from '@herald/testkit';
import {
  JSONCodec,
  type NatsConnection,
  connect as natsConnect,
  headers as natsHeaders,
} from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, newTenant, recipient, type Tenant, useStack } from './fixtures.js';

type Transport = '/notify' | '/bff_v001/notify' | 'nats';
const TRANSPORTS: Transport[] = ['/notify', '/bff_v001/notify', 'nats'];
const codec = JSONCodec();

/**
 * One table over all three dispatch paths: HTTP canonical, HTTP alias, and the NATS request a
 * backend service makes. Each must answer the same status and the same body.
 */
describe('every dispatch path behaves identically', () => {
  const stack = useStack();
  let nc: NatsConnection;
  let tenant: Tenant;
  let online: string;
  let sock: TestSocket;

  beforeAll(async () => {
    nc = await natsConnect(stack().nats.connectOptions());
    tenant = await newTenant(stack());
    online = recipient();
    sock = await connect(stack(), { apiKey: tenant.key.key, recipient: online });
  });
  afterAll(async () => {
    await sock?.close();
    await nc?.close();
  });

  async function dispatch(
    via: Transport,
    body: unknown,
    account = tenant.account,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    if (via !== 'nats') {
      const res = await post(stack().baseUrl, stack().ca, body, { path: via });
      return { status: res.status, body: res.body };
    }
    const msg = await nc.request(
      subjects.dispatch(account),
      new TextEncoder().encode(JSON.stringify(body)),
      { timeout: 5000 },
    );
    const { http_status, ...rest } = codec.decode(msg.data) as Record<string, unknown>;
    return { status: http_status as number, body: rest };
  }

  const cases: Array<[string, () => unknown, number, Record<string, unknown>]> = [
    [
      'online recipient',
      () => ({ recipient: online, payload: { a: 1 }, api_key: tenant.key.key, client: 'mobile' }),
      200,
      { status: 'sent' },
    ],
    [
      'offline recipient',
      () => ({ recipient: recipient(), payload: [1], api_key: tenant.key.key, client: 'mobile' }),
      202,
      { status: 'User offline, notification saved' },
    ],
    [
      'bad recipient',
      () => ({ recipient: 'nope', payload: 1, api_key: tenant.key.key, client: 'mobile' }),
      400,
      { error: expect.objectContaining({ code: 'invalid_recipient', field: 'recipient' }) },
    ],
    [
      'missing client',
      () => ({ recipient: recipient(), payload: 1, api_key: tenant.key.key }),
      400,
      { error: expect.objectContaining({ code: 'missing_field', field: 'client' }) },
    ],
    [
      'bad client',
      () => ({ recipient: recipient(), payload: 1, api_key: tenant.key.key, client: 'tv' }),
      400,
      { error: expect.objectContaining({ code: 'invalid_client' }) },
    ],
    [
      'unknown key',
      () => ({
        recipient: recipient(),
        payload: 1,
        api_key: 'hk_test_unknownunknownunknownunknownunknown',
        client: 'mobile',
      }),
      401,
      { error: expect.objectContaining({ code: 'invalid_api_key' }) },
    ],
    [
      'missing key',
      () => ({ recipient: recipient(), payload: 1, client: 'mobile' }),
      401,
      { error: expect.objectContaining({ code: 'missing_api_key' }) },
    ],
  ];

  for (const [name, body, status, shape] of cases) {
    it.each(TRANSPORTS)(`${name} via %s → ${status}`, async (via) => {
      const res = await dispatch(via, body());
      expect(res.status).toBe(status);
      expect(res.body).toEqual(status < 300 ? { ...shape, id: expect.any(String) } : shape);
    });
  }

  it('the NATS path refuses a key of another account than the subject names (403 account_mismatch)', async () => {
    const other = await newTenant(stack());
    const res = await dispatch(
      'nats',
      { recipient: recipient(), payload: 1, api_key: tenant.key.key, client: 'mobile' },
      other.account,
    );
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: expect.objectContaining({ code: 'account_mismatch' }) });
  });

  it.each(TRANSPORTS)(
    'an Idempotency-Key stores a retried offline event once, via %s',
    async (via) => {
      const to = recipient();
      const body = {
        recipient: to,
        payload: { once: true },
        api_key: tenant.key.key,
        client: 'mobile',
      };
      const key = `order-${Math.random()}`;
      const send = async () => {
        if (via !== 'nats')
          return post(stack().baseUrl, stack().ca, body, {
            path: via,
            headers: { 'idempotency-key': key },
          });
        const h = natsHeaders();
        h.set('Idempotency-Key', key);
        const msg = await nc.request(
          subjects.dispatch(tenant.account),
          new TextEncoder().encode(JSON.stringify(body)),
          { timeout: 5000, headers: h },
        );
        const { http_status, ...rest } = codec.decode(msg.data) as Record<string, unknown>;
        return { status: http_status as number, body: rest };
      };
      const first = await send();
      const second = await send();
      expect(first.status).toBe(202);
      expect(second.status).toBe(202);
      expect(second.body.id).toBe(first.body.id);
      const s = await connect(stack(), { apiKey: tenant.key.key, recipient: to });
      await s.waitForFrames(1);
      // A live marker proves no second copy is queued behind the first.
      const marker = await post(stack().baseUrl, stack().ca, { ...body, payload: 'marker' });
      expect(marker.status).toBe(200);
      const frames = await s.waitForFrames(2);
      expect(frames.map((f) => f.text)).toEqual(['{"once":true}', '"marker"']);
      await s.close();
    },
  );

  it('an Idempotency-Key pushes a retried live event once', async () => {
    const body = {
      recipient: online,
      payload: { live: 'once' },
      api_key: tenant.key.key,
      client: 'mobile',
    };
    const before = sock.frames.length;
    const h = { 'idempotency-key': `live-${Math.random()}` };
    const a = await post(stack().baseUrl, stack().ca, body, { headers: h });
    const b = await post(stack().baseUrl, stack().ca, body, { headers: h });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.id).toBe(a.body.id);
    const marker = await post(stack().baseUrl, stack().ca, { ...body, payload: 'marker' });
    expect(marker.status).toBe(200);
    await sock.waitForFrames(before + 2);
    expect(sock.frames.slice(before).map((f) => f.text)).toEqual(['{"live":"once"}', '"marker"']);
  });
});
