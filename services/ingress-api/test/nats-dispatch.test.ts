import { createLogger, type Serving, serve } from '@herald/kit';
import { DispatchReply, DispatchStatus, subjects } from '@herald/proto';
import { connect, type NatsConnection, headers as natsHeaders } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngress } from '../src/index.js';
import { ACCOUNT_A, ACCOUNT_B, KEYS, WEB_ORIGIN } from './support/auth-responder.js';
import {
  edgeStandIn,
  type IngressFixture,
  newRecipient,
  notifyBody,
  queuedMessages,
  startIngressFixture,
  testConfig,
} from './support/fixture.js';
import { request } from './support/http.js';

const PAYLOAD_LIMIT = 256;

let fx: IngressFixture;
let second: { nc: NatsConnection; serving: Serving };
beforeAll(async () => {
  const env = { PAYLOAD_LIMIT_BYTES: String(PAYLOAD_LIMIT), BODY_OVERHEAD_BYTES: '256' };
  fx = await startIngressFixture(env);
  // A second instance in the same queue group: each dispatch must still be served once.
  const nc = await connect({ ...fx.nats.connectOptions(), name: 'test-ingress-2' });
  const config = testConfig(fx.nats, env);
  const ingress = createIngress(config, { nc, logger: createLogger('ingress-api', 'silent') });
  second = { nc, serving: await serve(ingress, config, 0) };
});
afterAll(async () => {
  await second?.serving.close();
  await second?.nc.close();
  await fx?.stop();
});

/** A service's dispatch over NATS: request to rt.dispatch.<account>, JSON reply. */
async function natsDispatch(account: string, body: unknown, hdrs: Record<string, string> = {}) {
  const h = natsHeaders();
  for (const [name, value] of Object.entries(hdrs)) h.set(name, value);
  const data = typeof body === 'string' ? body : JSON.stringify(body);
  const msg = await fx.peer.request(subjects.dispatch(account), data, {
    timeout: 5000,
    headers: h,
  });
  return { reply: JSON.parse(new TextDecoder().decode(msg.data)), headers: msg.headers };
}

const httpPost = (body: unknown, headers: Record<string, string> = {}) =>
  request(fx.baseUrl, { body, headers });

/** The reply minus the event id, which differs per dispatch. */
const withoutId = ({ id: _id, ...rest }: Record<string, unknown>) => rest;

describe('NATS dispatch gives the HTTP result plus http_status', () => {
  const refusals: Array<[string, (r: string) => unknown, number]> = [
    ['missing recipient', () => ({ payload: 1, api_key: KEYS.mobile, client: 'mobile' }), 400],
    ['bad recipient', () => notifyBody('not-a-uuid'), 400],
    ['bad client', (r) => notifyBody(r, { client: 'tv' }), 400],
    ['missing api_key', (r) => ({ recipient: r, payload: 1, client: 'mobile' }), 401],
    ['unknown key', (r) => notifyBody(r, { api_key: KEYS.unknown }), 401],
    ['revoked key', (r) => notifyBody(r, { api_key: KEYS.revoked }), 401],
    ['body not JSON', () => '{nope', 400],
    ['payload over the limit', (r) => notifyBody(r, { payload: 'x'.repeat(PAYLOAD_LIMIT) }), 413],
    ['body over the limit', (r) => notifyBody(r, { pad: 'x'.repeat(PAYLOAD_LIMIT * 2) }), 413],
  ];
  it.each(refusals)('%s', async (_name, build, status) => {
    const body = build(newRecipient());
    const http = await httpPost(body);
    const { reply } = await natsDispatch(ACCOUNT_A, body);
    expect(http.status).toBe(status);
    expect(reply).toEqual({ ...http.json, http_status: status });
    expect(DispatchReply.safeParse(reply).success).toBe(true);
  });

  it('sent: 200 with an id, pushed to the edge', async () => {
    const recipient = newRecipient();
    const edge = edgeStandIn(fx.peer, recipient);
    await fx.peer.flush();
    const { reply } = await natsDispatch(ACCOUNT_A, notifyBody(recipient));
    const http = await httpPost(notifyBody(recipient));
    edge.stop();
    expect(reply).toEqual({
      status: DispatchStatus.sent,
      id: expect.any(String),
      http_status: 200,
    });
    expect(withoutId(reply)).toEqual({ ...withoutId(http.json), http_status: http.status });
    expect(edge.received.map((d) => d.id)).toEqual([reply.id, http.json.id]);
  });

  it('queued: 202 with an id, stored once although two instances subscribe', async () => {
    const recipient = newRecipient();
    const { reply } = await natsDispatch(ACCOUNT_A, notifyBody(recipient));
    expect(reply).toEqual({
      status: DispatchStatus.queued,
      id: expect.any(String),
      http_status: 202,
    });
    expect(await queuedMessages(fx.jsm, recipient)).toHaveLength(1);
  });

  it('refuses a key of another account than the subject names with 403 account_mismatch', async () => {
    const recipient = newRecipient();
    const { reply } = await natsDispatch(
      ACCOUNT_A,
      notifyBody(recipient, { api_key: KEYS.accountB }),
    );
    expect(reply.http_status).toBe(403);
    expect(reply.error).toMatchObject({ code: 'account_mismatch', field: 'api_key' });
    expect(await queuedMessages(fx.jsm, recipient, ACCOUNT_A)).toHaveLength(0);
    expect(await queuedMessages(fx.jsm, recipient, ACCOUNT_B)).toHaveLength(0);
  });

  it.each([
    ['a number', 42],
    ['an array', [KEYS.mobile]],
    ['null', null],
    ['an empty string', ''],
  ])('refuses an api_key that is %s with the same 401 invalid_api_key as HTTP', async (_n, k) => {
    const recipient = newRecipient();
    const { reply } = await natsDispatch(ACCOUNT_A, notifyBody(recipient, { api_key: k }));
    expect(reply.http_status).toBe(401);
    expect(reply.error).toMatchObject({ code: 'invalid_api_key', field: 'api_key' });
    expect(await queuedMessages(fx.jsm, recipient)).toHaveLength(0);
  });

  it('refuses a subject token that is not an account id', async () => {
    const msg = await fx.peer.request(
      'rt.dispatch.not-an-account',
      JSON.stringify(notifyBody(newRecipient())),
      {
        timeout: 5000,
      },
    );
    const reply = JSON.parse(new TextDecoder().decode(msg.data));
    expect(reply.http_status).toBe(400);
    expect(reply.error).toMatchObject({ code: 'invalid_field', field: 'subject' });
  });

  it('honours the Origin header for a web key', async () => {
    const body = notifyBody(newRecipient(), { api_key: KEYS.web, client: 'web' });
    expect((await natsDispatch(ACCOUNT_A, body)).reply.error.code).toBe('origin_mismatch');
    expect((await natsDispatch(ACCOUNT_A, body, { Origin: WEB_ORIGIN })).reply.http_status).toBe(
      202,
    );
  });

  it('honours the Idempotency-Key header: the retry stores nothing and returns the same id', async () => {
    const recipient = newRecipient();
    const hdrs = { 'Idempotency-Key': `nats-${recipient}` };
    const first = await natsDispatch(ACCOUNT_A, notifyBody(recipient), hdrs);
    const retry = await natsDispatch(ACCOUNT_A, notifyBody(recipient), hdrs);
    expect(first.reply.http_status).toBe(202);
    expect(retry.reply).toEqual(first.reply);
    expect(await queuedMessages(fx.jsm, recipient)).toHaveLength(1);
    const bad = await natsDispatch(ACCOUNT_A, notifyBody(recipient), {
      'Idempotency-Key': 'has space',
    });
    expect(bad.reply.error).toMatchObject({ code: 'invalid_field', field: 'Idempotency-Key' });
  });
});
