import { subjects } from '@herald/proto';
import { type HttpResult, openSocket, post } from '@herald/testkit';
import { type NatsConnection, connect as natsConnect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, recipient, type Tenant, useStack } from './fixtures.js';

/*
 * Key scopes (issue 30): a `subscribe` key opens sockets and is refused every dispatch, whatever
 * the transport; a `dispatch` key sends and is refused sockets. Real sockets, real stack.
 */
describe('key scopes', () => {
  const stack = useStack();
  let nc: NatsConnection;
  const tenants = {} as Record<'subscribe' | 'dispatch' | 'both', Tenant>;

  beforeAll(async () => {
    nc = await natsConnect(stack().nats.connectOptions());
    for (const scope of ['subscribe', 'dispatch', 'both'] as const) {
      const { id } = await stack().createAccount();
      const key = await stack().createKey({ account: id, kind: 'test', client: 'mobile', scope });
      expect(key.scope).toBe(scope);
      tenants[scope] = { account: id, key };
    }
  });
  afterAll(async () => {
    await nc?.close();
  });

  const body = (t: Tenant, to: string) => ({
    recipient: to,
    payload: { n: 1 },
    api_key: t.key.key,
    client: 'mobile',
  });
  const batch = (t: Tenant, to: string) => ({
    api_key: t.key.key,
    client: 'mobile',
    events: [{ recipient: to, payload: { n: 1 } }],
  });

  /** Every dispatch transport, answering status and body alike. */
  const transports: Array<[string, (t: Tenant) => Promise<Pick<HttpResult, 'status' | 'body'>>]> = [
    ['HTTP /notify', async (t) => post(stack().baseUrl, stack().ca, body(t, recipient()))],
    [
      'HTTP /notify/batch',
      async (t) =>
        post(stack().baseUrl, stack().ca, batch(t, recipient()), { path: '/notify/batch' }),
    ],
    [
      'NATS rt.dispatch',
      async (t) => natsDispatch(subjects.dispatch(t.account), body(t, recipient())),
    ],
    [
      'NATS rt.dispatch.batch',
      async (t) => natsDispatch(subjects.dispatchBatch(t.account), batch(t, recipient())),
    ],
  ];

  async function natsDispatch(subject: string, payload: unknown) {
    const msg = await nc.request(subject, new TextEncoder().encode(JSON.stringify(payload)), {
      timeout: 10_000,
    });
    const { http_status, ...rest } = JSON.parse(new TextDecoder().decode(msg.data));
    return { status: http_status as number, body: rest };
  }

  for (const [name, send] of transports) {
    it(`a subscribe key is refused over ${name}: 403 scope_denied`, async () => {
      const res = await send(tenants.subscribe);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'scope_denied', field: 'api_key' });
    });

    it(`a dispatch key (and a key of both) sends over ${name}`, async () => {
      for (const t of [tenants.dispatch, tenants.both]) {
        const res = await send(t);
        // Nobody is connected: the event is queued (202), or the batch answers 200 per event.
        expect([200, 202]).toContain(res.status);
        expect(res.body.error).toBeUndefined();
      }
    });
  }

  it('a dispatch key cannot open a socket: 403 scope_denied, 4403 in herald.v1', async () => {
    const t = tenants.dispatch;
    const plain = openSocket(stack().wsUrl, stack().ca, {
      apiKey: t.key.key,
      recipient: recipient(),
    });
    const end = await plain.ended;
    expect(end.httpStatus).toBe(403);
    expect(JSON.parse(end.httpBody ?? '{}').error).toMatchObject({ code: 'scope_denied' });
    const v1 = openSocket(stack().wsUrl, stack().ca, {
      apiKey: t.key.key,
      recipient: recipient(),
      v1: true,
    });
    const closed = await v1.ended;
    expect(closed.code).toBe(4403);
    expect(JSON.parse(closed.reason)).toEqual({ code: 'scope_denied' });
  });

  it('a subscribe key opens a socket and receives what a dispatch key of its account sends', async () => {
    const { id } = await stack().createAccount({ plan: 'hobby' });
    const sub = await stack().createKey({
      account: id,
      kind: 'live',
      client: 'mobile',
      scope: 'subscribe',
    });
    const send = await stack().createKey({
      account: id,
      kind: 'live',
      client: 'mobile',
      scope: 'dispatch',
    });
    const to = recipient();
    const s = await connect(stack(), { apiKey: sub.key, recipient: to });
    const res = await post(stack().baseUrl, stack().ca, body({ account: id, key: send }, to));
    expect(res.status).toBe(200);
    expect((await s.waitForFrames(1))[0]?.text).toBe('{"n":1}');
    await s.close();
  });
});
