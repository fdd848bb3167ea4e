import { subjects } from '@herald/proto';
import {
  JSONCodec,
  type NatsConnection,
  connect as natsConnect,
  headers as natsHeaders,
} from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, eventually, newTenant, recipient, type Tenant, useStack } from './fixtures.js';
import { notifyTopic, putMembers, recipients, topicStatus } from './topic-fixtures.js';

const codec = JSONCodec();

/**
 * A topic event over NATS (issue 44): `rt.dispatch.<account>` with `topic` (and `exclude`) is
 * the same dispatch as `POST /notify`'s, so it answers the same body (plus `http_status`), fans
 * out to every member but the excluded, and names the field at fault in a refusal.
 */
describe('topics over rt.dispatch.<account>', () => {
  const stack = useStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] });
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await natsConnect(stack().nats.connectOptions());
  });
  afterAll(async () => {
    await nc?.close();
  });

  async function viaNats(
    tenant: Tenant,
    body: Record<string, unknown>,
    idempotencyKey?: string,
    account = tenant.account,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const full = { payload: { via: 'nats' }, api_key: tenant.key.key, client: 'mobile', ...body };
    let headers: ReturnType<typeof natsHeaders> | undefined;
    if (idempotencyKey) {
      headers = natsHeaders();
      headers.set('Idempotency-Key', idempotencyKey);
    }
    const msg = await nc.request(subjects.dispatch(account), codec.encode(full), {
      timeout: 10_000,
      ...(headers ? { headers } : {}),
    });
    const { http_status, ...rest } = codec.decode(msg.data) as Record<string, unknown>;
    return { status: http_status as number, body: rest };
  }

  it('fans out to every member but the excluded, answering as HTTP does', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const members = recipients(20);
    const [online, actor] = members as [string, string];
    await putMembers(s, tenant, 'project:7.followers', members);
    const sock = await connect(s, { apiKey: tenant.key.key, recipient: online, v1: true });
    try {
      const sent = await viaNats(tenant, { topic: 'project:7.followers', exclude: [actor] });
      expect(sent.status).toBe(202);
      expect(sent.body).toEqual({ status: 'accepted', id: expect.any(String), members: 19 });
      // The same body as HTTP's, key for key.
      const http = await notifyTopic(s, tenant, 'project:7.followers', { exclude: [actor] });
      expect(http.status).toBe(202);
      expect(Object.keys(http.body)).toEqual(Object.keys(sent.body));
      const [copy] = await sock.waitForEvents(1);
      expect(JSON.parse(sock.frames[0]?.text ?? '{}')).toMatchObject({
        type: 'event',
        topic: 'project:7.followers',
        payload: { via: 'nats' },
      });
      expect(copy?.id).not.toBe(sent.body.id);
      await eventually(
        async () => {
          const v = await topicStatus(nc, tenant, sent.body.id as string);
          return v.members === 19 && v.sent + v.delivered === 1 && v.pending === 18;
        },
        "the NATS fan-out's copies counted under its id",
        30_000,
      );
    } finally {
      await sock.close();
    }
  });

  it('answers a retry under the same Idempotency-Key header with the first fan-out', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    await putMembers(s, tenant, 'retry', recipients(3));
    const first = await viaNats(tenant, { topic: 'retry' }, 'nats-fanout-1');
    expect(first.status).toBe(202);
    expect(await viaNats(tenant, { topic: 'retry' }, 'nats-fanout-1')).toEqual(first);
  });

  it('names the field at fault, and keeps another account out', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    await putMembers(s, tenant, 'ok', [recipient()]);
    const cases: Array<[Record<string, unknown>, number, string, string]> = [
      [{ topic: 'ok', recipient: recipient() }, 400, 'invalid_field', 'topic'],
      [{ topic: 'a/b' }, 400, 'invalid_field', 'topic'],
      [{ topic: 'ok', exclude: ['x'] }, 400, 'invalid_field', 'exclude.0'],
      [{ topic: 'ok', exclude: 'x' }, 400, 'invalid_field', 'exclude'],
      [{ topic: 'ok', client: 'tv' }, 400, 'invalid_client', 'client'],
      [{ topic: 'ok', payload: undefined }, 400, 'missing_field', 'payload'],
      [{ topic: 'nobody' }, 404, 'not_found', 'topic'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await viaNats(tenant, body);
      expect({ body, status: res.status, error: res.body.error }).toMatchObject({
        status,
        error: { code, field },
      });
    }
    const other = await newTenant(s);
    const intruder = await viaNats(other, { topic: 'ok' });
    expect(intruder.status).toBe(404);
    const mismatch = await viaNats(other, { topic: 'ok' }, undefined, tenant.account);
    expect(mismatch.status).toBe(403);
    expect((mismatch.body.error as { code: string }).code).toBe('account_mismatch');
  });
});
