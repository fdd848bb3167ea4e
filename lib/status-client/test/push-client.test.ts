import {
  errorReply,
  HeraldError,
  PUSH_API_SUBJECT,
  PushRequest,
  PushSubscribeReply,
  PushSubscriptionReply,
  PushVapidReply,
} from '@herald/proto';
import { PUSH_API_UNAVAILABLE, PushClient } from '@herald/status-client';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, JSONCodec, type NatsConnection, type Subscription } from 'nats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/**
 * PushClient's requests as the status service receives them. The service's responder is built
 * apart (issue 40), so a small responder stands in for it here, as the status service's NATS user,
 * answering valid proto replies; the callers are ingress's and auth's own users, so their
 * permissions on rt.pushapi.request are exercised too.
 */

const codec = JSONCodec();
const ACCOUNT = '6b1c3a4e-1111-4111-8111-111111111111';
const SUBSCRIPTION = {
  endpoint: 'https://push.example.net/send/abc',
  keys: { p256dh: `B${'A'.repeat(86)}`, auth: 'A'.repeat(22) },
};

let server: NatsServer;
let statusNc: NatsConnection;
let ingressNc: NatsConnection;
let authNc: NatsConnection;
let responder: Subscription | undefined;
const asked: PushRequest[] = [];

function answer(req: PushRequest): unknown {
  if (req.op === 'vapid-public-key') {
    return PushVapidReply.parse({ v: 1, ok: true, public_key: 'BPK', subject: 'mailto:a@b.c' });
  }
  if (req.op === 'subscribe')
    return PushSubscribeReply.parse({ v: 1, ok: true, id: 's-1', created: true });
  if (req.op === 'unsubscribe' && req.recipient === 'intruder') {
    return errorReply(
      new HeraldError('not_found', 'no such subscription of this recipient', { field: 'id' }),
    );
  }
  if (req.op === 'unsubscribe') {
    return PushSubscriptionReply.parse({
      v: 1,
      ok: true,
      subscription: {
        id: req.id,
        account_id: req.account_id,
        key_id: 'k-1',
        recipient: req.recipient ?? 'r-1',
        kind: 'webpush',
        device: null,
        endpoint_origin: 'https://push.example.net',
        created_at: '2026-11-29T05:00:00.000Z',
        last_success_at: null,
      },
    });
  }
  // Not a reply the client's schema accepts: the client must not take it for an answer.
  return { v: 1, ok: true };
}

beforeAll(async () => {
  server = await startNatsServer();
  [statusNc, ingressNc, authNc] = await Promise.all([
    connect(server.connectOptions('status')),
    connect(server.connectOptions('ingress-api')),
    connect(server.connectOptions('auth')),
  ]);
  responder = statusNc.subscribe(PUSH_API_SUBJECT, {
    callback: (_err, msg) => {
      const req = PushRequest.parse(codec.decode(msg.data));
      asked.push(req);
      msg.respond(codec.encode(answer(req)));
    },
  });
  await statusNc.flush();
});
afterAll(async () => {
  await Promise.all([statusNc?.close(), ingressNc?.close(), authNc?.close()]);
  await server?.stop();
});
beforeEach(() => {
  asked.length = 0;
});

describe('PushClient', () => {
  it("sends ingress's registration, key lookup and recipient-scoped delete as proto requests", async () => {
    const client = new PushClient(ingressNc, 2000);
    expect(
      await client.subscribe({
        account: ACCOUNT,
        keyId: 'k-1',
        recipient: 'r-1',
        device: 'phone',
        subscription: SUBSCRIPTION,
      }),
    ).toEqual({ v: 1, ok: true, id: 's-1', created: true });
    await client.subscribe({
      account: ACCOUNT,
      keyId: 'k-1',
      recipient: 'r-2',
      subscription: SUBSCRIPTION,
    });
    expect((await client.vapidPublicKey(ACCOUNT)).public_key).toBe('BPK');
    expect((await client.unsubscribe(ACCOUNT, 's-1', 'r-1')).subscription.recipient).toBe('r-1');
    expect(asked).toEqual([
      {
        v: 1,
        op: 'subscribe',
        account_id: ACCOUNT,
        key_id: 'k-1',
        recipient: 'r-1',
        device: 'phone',
        kind: 'webpush',
        subscription: SUBSCRIPTION,
      },
      {
        v: 1,
        op: 'subscribe',
        account_id: ACCOUNT,
        key_id: 'k-1',
        recipient: 'r-2',
        kind: 'webpush',
        subscription: SUBSCRIPTION,
      },
      { v: 1, op: 'vapid-public-key', account_id: ACCOUNT },
      { v: 1, op: 'unsubscribe', account_id: ACCOUNT, id: 's-1', recipient: 'r-1' },
    ]);
  });

  it("keeps a refusal's code and field, and takes a malformed reply for no answer", async () => {
    const client = new PushClient(authNc, 2000);
    await expect(client.unsubscribe(ACCOUNT, 's-1', 'intruder')).rejects.toMatchObject({
      code: 'not_found',
      field: 'id',
    });
    await expect(client.status(ACCOUNT)).rejects.toMatchObject({
      code: 'unavailable',
      message: PUSH_API_UNAVAILABLE,
    });
  });

  it('is unavailable, with Retry-After 1, when nothing answers', async () => {
    await responder?.drain();
    await statusNc.flush();
    const started = Date.now();
    await expect(new PushClient(authNc, 5000).list(ACCOUNT)).rejects.toMatchObject({
      code: 'unavailable',
      message: PUSH_API_UNAVAILABLE,
      retryAfter: 1,
    });
    // No responders is answered by the server at once, not after the timeout.
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
