import {
  type ErrorReply,
  PUSH_API_SUBJECT,
  PUSH_DEVICE_TOKEN_MAX,
  PushRequest,
  type PushSubscribeReply,
  type PushSubscriptionReply,
  type PushVapidReply,
} from '@herald/proto';
import { SignJWT } from 'jose';
import type { Subscription } from 'nats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  answerFor,
  KEYS,
  key,
  WEB_ORIGIN,
} from './support/auth-responder.js';
import { type IngressFixture, newRecipient, startIngressFixture } from './support/fixture.js';
import { request } from './support/http.js';

/** Keys of account A with the scopes and token rules the routes must honour. */
const SUBSCRIBE_ONLY = 'hk_live_push_subscribe_scope_key';
const DISPATCH_ONLY = 'hk_live_push_dispatch_scope_key';
const TOKENS = 'hk_live_push_token_requiring_key';
const SECRET = `hk_sign_${'s'.repeat(43)}`;
const VAPID_PUBLIC = `B${'A'.repeat(86)}`;
const BODY_MAX = 2048;

/** A browser's subscription as `toJSON()` gives it. */
const subscription = (n = 1) => ({
  endpoint: `https://push.example.net/send/${n}`,
  expirationTime: null,
  keys: { p256dh: `B${'p'.repeat(86)}`, auth: 'a'.repeat(22) },
});

let fx: IngressFixture;
let responder: Subscription;
/** Every request the status service stand-in got, parsed as proto's PushRequest. */
const got: PushRequest[] = [];
/** The stand-in's subscriptions: id → whose. */
const stored = new Map<string, { account: string; recipient: string; endpoint: string }>();
let answering = true;

type Reply<S extends z.ZodType> = z.infer<S>;

/**
 * A test double of the status service on rt.pushapi.request (its real responder is another
 * package): records each request, keeps subscriptions per account and recipient, and answers
 * proto's replies. The requests cross the real nats-server.
 */
function startPushResponder(): Subscription {
  let next = 0;
  return fx.peer.subscribe(PUSH_API_SUBJECT, {
    callback: (err, msg) => {
      if (err || !answering) return;
      const req = PushRequest.parse(msg.json());
      got.push(req);
      const notFound = (message: string): ErrorReply => ({
        v: 1,
        ok: false,
        error: { code: 'not_found', message },
      });
      let reply:
        | Reply<typeof PushVapidReply>
        | Reply<typeof PushSubscribeReply>
        | Reply<typeof PushSubscriptionReply>
        | ErrorReply;
      if (req.op === 'vapid-public-key') {
        reply =
          req.account_id === ACCOUNT_A
            ? { v: 1, ok: true, public_key: VAPID_PUBLIC, subject: 'mailto:ops@example.com' }
            : notFound('no VAPID key');
      } else if (req.op === 'subscribe') {
        const same = [...stored].find(([, s]) => s.endpoint === req.subscription.endpoint);
        const id = same?.[0] ?? `sub_${++next}`;
        stored.set(id, {
          account: req.account_id,
          recipient: req.recipient,
          endpoint: req.subscription.endpoint,
        });
        reply = { v: 1, ok: true, id, created: same === undefined };
      } else if (req.op === 'subscribe-device') {
        const id = `sub_${++next}`;
        stored.set(id, { account: req.account_id, recipient: req.recipient, endpoint: req.token });
        reply = { v: 1, ok: true, id, created: true };
      } else if (req.op === 'unsubscribe') {
        const sub = stored.get(req.id);
        // The status service's rule: only the account's own, and the recipient's when named.
        if (!sub || sub.account !== req.account_id || sub.recipient !== req.recipient) {
          reply = notFound('no such subscription');
        } else {
          stored.delete(req.id);
          reply = {
            v: 1,
            ok: true,
            subscription: {
              id: req.id,
              account_id: sub.account,
              key_id: 'k',
              recipient: sub.recipient,
              kind: 'webpush',
              device: null,
              endpoint_origin: 'https://push.example.net',
              created_at: new Date().toISOString(),
              last_success_at: null,
            },
          };
        }
      } else {
        reply = notFound('not this op');
      }
      msg.respond(JSON.stringify(reply));
    },
  });
}

beforeAll(async () => {
  fx = await startIngressFixture({
    PUSH_SUBSCRIPTION_MAX_BYTES: String(BODY_MAX),
    PUSH_TIMEOUT_MS: '300',
  });
  answerFor(SUBSCRIBE_ONLY, key('key-subscribe', { scope: 'subscribe' }));
  answerFor(DISPATCH_ONLY, key('key-dispatch', { scope: 'dispatch' }));
  answerFor(
    TOKENS,
    key('key-tokens', { require_token: true, signing_secrets: [{ secret: SECRET, until: null }] }),
  );
  responder = startPushResponder();
});
afterAll(async () => {
  responder?.unsubscribe();
  await fx?.stop();
});
beforeEach(() => {
  got.length = 0;
  answering = true;
});

const token = (recipient: string, secret = SECRET) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(recipient)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(secret));

const subscribe = (body: Record<string, unknown>, opts: { origin?: string; path?: string } = {}) =>
  request(fx.baseUrl, {
    path: opts.path ?? '/push/subscriptions',
    body,
    headers: opts.origin ? { origin: opts.origin } : {},
  });

const bodyOf = (recipient: string, over: Record<string, unknown> = {}) => ({
  api_key: KEYS.mobile,
  recipient,
  kind: 'webpush',
  subscription: subscription(),
  ...over,
});

describe('GET /push/vapid-public-key (issue 40)', () => {
  it('answers the account’s public key for any valid key, asking for the key’s account', async () => {
    for (const path of ['/push/vapid-public-key', '/bff_v001/push/vapid-public-key']) {
      const res = await request(fx.baseUrl, {
        method: 'GET',
        path: `${path}?api_key=${DISPATCH_ONLY}`,
      });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ public_key: VAPID_PUBLIC });
    }
    expect(got).toEqual([
      { v: 1, op: 'vapid-public-key', account_id: ACCOUNT_A },
      { v: 1, op: 'vapid-public-key', account_id: ACCOUNT_A },
    ]);
  });

  it('is a 404 saying how to configure one for an account without, 401 for a bad key, 403 for a web key from another Origin', async () => {
    const none = await request(fx.baseUrl, {
      method: 'GET',
      path: `/push/vapid-public-key?api_key=${KEYS.accountB}`,
    });
    expect(none.status).toBe(404);
    expect(none.json.error.message).toContain('push configure');
    expect(got.at(-1)).toMatchObject({ account_id: ACCOUNT_B });
    const bad = await request(fx.baseUrl, {
      method: 'GET',
      path: `/push/vapid-public-key?api_key=${KEYS.unknown}`,
    });
    expect(bad.status).toBe(401);
    expect(bad.json.error).toMatchObject({ code: 'invalid_api_key', field: 'api_key' });
    const web = (origin: string) =>
      request(fx.baseUrl, {
        method: 'GET',
        path: `/push/vapid-public-key?api_key=${KEYS.web}`,
        headers: { origin },
      });
    expect((await web('https://evil.example')).json.error.code).toBe('origin_mismatch');
    const ok = await web(WEB_ORIGIN);
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
  });
});

describe('POST /push/subscriptions (issue 40)', () => {
  it('forwards a subscription with the verified key’s account and id: 201, then 200 for the same endpoint', async () => {
    const recipient = newRecipient();
    const first = await subscribe(bodyOf(recipient.toUpperCase(), { device: 'phone-1' }));
    expect(first.status).toBe(201);
    expect(first.json).toEqual({ id: expect.stringMatching(/^sub_/) });
    const again = await subscribe(bodyOf(recipient), { path: '/bff_v001/push/subscriptions' });
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ id: first.json.id });
    expect(got[0]).toEqual({
      v: 1,
      op: 'subscribe',
      account_id: ACCOUNT_A,
      key_id: 'key-mobile',
      recipient,
      device: 'phone-1',
      kind: 'webpush',
      subscription: subscription(),
    });
    // The api_key may come in the query instead.
    const query = await subscribe(
      bodyOf(recipient, { api_key: undefined, subscription: subscription(2) }),
      {
        path: `/push/subscriptions?api_key=${KEYS.mobile}`,
      },
    );
    expect(query.status).toBe(201);
  });

  it('authorises as /ws/connect does: key, scope, Origin, recipient token', async () => {
    const recipient = newRecipient();
    const refused = async (body: Record<string, unknown>, origin?: string) =>
      (await subscribe(bodyOf(recipient, body), origin ? { origin } : {})).json.error;
    expect(await refused({ api_key: KEYS.unknown })).toMatchObject({ code: 'invalid_api_key' });
    expect(await refused({ api_key: KEYS.revoked })).toMatchObject({ code: 'key_revoked' });
    expect(await refused({ api_key: DISPATCH_ONLY })).toMatchObject({
      code: 'scope_denied',
      field: 'api_key',
    });
    expect(await refused({ api_key: KEYS.web }, 'https://evil.example')).toMatchObject({
      code: 'origin_mismatch',
    });
    expect(await refused({ api_key: KEYS.web })).toMatchObject({ code: 'origin_mismatch' });
    expect(await refused({ api_key: KEYS.mobile, client: 'web' })).toMatchObject({
      code: 'client_mismatch',
    });
    expect(await refused({ api_key: TOKENS })).toMatchObject({
      code: 'missing_token',
      field: 'token',
    });
    expect(await refused({ api_key: TOKENS, token: 'not.a.jwt' })).toMatchObject({
      code: 'invalid_token',
    });
    expect(
      await refused({
        api_key: TOKENS,
        token: await token(recipient, `hk_sign_${'x'.repeat(43)}`),
      }),
    ).toMatchObject({ code: 'invalid_token' });
    expect(await refused({ api_key: TOKENS, token: await token(newRecipient()) })).toMatchObject({
      code: 'token_recipient_mismatch',
    });
    // Nothing refused reached the status service.
    expect(got).toEqual([]);

    for (const [body, origin] of [
      [{ api_key: SUBSCRIBE_ONLY, subscription: subscription(8) }, undefined],
      [{ api_key: KEYS.web, subscription: subscription(3) }, WEB_ORIGIN],
      [
        { api_key: TOKENS, token: await token(recipient), subscription: subscription(4) },
        undefined,
      ],
    ] as const) {
      const res = await subscribe(bodyOf(recipient, body), origin ? { origin } : {});
      expect(res.status).toBe(201);
    }
    expect(got.map((r) => r.op === 'subscribe' && r.key_id)).toEqual([
      'key-subscribe',
      'key-web',
      'key-tokens',
    ]);
  });

  it('forwards an fcm/apns device token (token: the DEVICE token), bounded at PUSH_DEVICE_TOKEN_MAX', async () => {
    const recipient = newRecipient();
    for (const kind of ['fcm', 'apns'] as const) {
      const at = 'd'.repeat(PUSH_DEVICE_TOKEN_MAX);
      const res = await subscribe(bodyOf(recipient, { kind, token: at, subscription: undefined }));
      expect(res.status, JSON.stringify(res.json)).toBe(201);
      const over = await subscribe(
        bodyOf(recipient, { kind, token: `${at}d`, subscription: undefined }),
      );
      expect(over.status).toBe(400);
      expect(over.json.error).toMatchObject({ code: 'invalid_field', field: 'token' });
      expect(over.json.error.message).toContain(`at most ${PUSH_DEVICE_TOKEN_MAX}`);
      const none = await subscribe(bodyOf(recipient, { kind, subscription: undefined }));
      expect(none.json.error).toMatchObject({ code: 'missing_field', field: 'token' });
      const bad = await subscribe(
        bodyOf(recipient, { kind, token: 'a/b', subscription: undefined }),
      );
      expect(bad.json.error).toMatchObject({ code: 'invalid_field', field: 'token' });
    }
    expect(got).toEqual([
      expect.objectContaining({
        op: 'subscribe-device',
        kind: 'fcm',
        key_id: 'key-mobile',
        recipient,
      }),
      expect.objectContaining({
        op: 'subscribe-device',
        kind: 'apns',
        key_id: 'key-mobile',
        recipient,
      }),
    ]);
  });

  it('a token-requiring key refuses a device registration without recipient_token, takes one with it', async () => {
    const recipient = newRecipient();
    const device = { api_key: TOKENS, kind: 'fcm', token: 'device-1', subscription: undefined };
    const without = await subscribe(bodyOf(recipient, device));
    expect(without.json.error).toMatchObject({ code: 'missing_token' });
    expect(got).toEqual([]);
    const withToken = await subscribe(
      bodyOf(recipient, { ...device, recipient_token: await token(recipient) }),
    );
    expect(withToken.status, JSON.stringify(withToken.json)).toBe(201);
    expect(got[0]).toMatchObject({
      op: 'subscribe-device',
      token: 'device-1',
      key_id: 'key-tokens',
    });
    // Web Push takes recipient_token too; token and recipient_token that differ are refused.
    const web = { api_key: TOKENS, subscription: subscription(9) };
    const both = await subscribe(
      bodyOf(recipient, { ...web, token: await token(recipient), recipient_token: 'x.y.z' }),
    );
    expect(both.json.error).toMatchObject({ code: 'invalid_field', field: 'recipient_token' });
    const alias = await subscribe(
      bodyOf(recipient, { ...web, recipient_token: await token(recipient) }),
    );
    expect(alias.status).toBe(201);
  });

  it('refuses a bad body naming the field', async () => {
    const recipient = newRecipient();
    const error = async (over: Record<string, unknown>) =>
      (await subscribe(bodyOf(recipient, over))).json.error;
    expect(await error({ kind: 'mqtt' })).toMatchObject({ field: 'kind' });
    expect(await error({ kind: undefined })).toMatchObject({ field: 'kind' });
    expect(await error({ recipient: 'user-7' })).toMatchObject({ code: 'invalid_recipient' });
    expect(await error({ api_key: undefined })).toMatchObject({ code: 'missing_api_key' });
    expect(await error({ subscription: undefined })).toMatchObject({ field: 'subscription' });
    expect(
      await error({
        subscription: { ...subscription(), keys: { p256dh: 'short', auth: 'a'.repeat(22) } },
      }),
    ).toMatchObject({ field: 'subscription.keys.p256dh' });
    expect(
      await error({ subscription: { ...subscription(), endpoint: 'not a url' } }),
    ).toMatchObject({
      field: 'subscription.endpoint',
    });
    expect(await error({ device: 'a b' })).toMatchObject({ field: 'device' });
    expect(got).toEqual([]);
  });

  it('takes a body of PUSH_SUBSCRIPTION_MAX_BYTES, not one byte more', async () => {
    const recipient = newRecipient();
    const sized = (bytes: number) => {
      const body = bodyOf(recipient, { device: 'd', subscription: subscription(5) });
      const pad = bytes - Buffer.byteLength(JSON.stringify({ ...body, pad: '' }));
      return JSON.stringify({ ...body, pad: 'x'.repeat(pad) });
    };
    const at = await subscribe(JSON.parse(sized(BODY_MAX)));
    expect(Buffer.byteLength(sized(BODY_MAX))).toBe(BODY_MAX);
    expect(at.status).toBe(201);
    const over = await request(fx.baseUrl, {
      path: '/push/subscriptions',
      body: sized(BODY_MAX + 1),
    });
    expect(over.status).toBe(413);
    expect(over.json.error.code).toBe('payload_too_large');
  });

  it('is a 503 with Retry-After while the status service does not answer', async () => {
    answering = false;
    const res = await subscribe(bodyOf(newRecipient()));
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json.error.code).toBe('unavailable');
  });

  it('answers a browser’s preflight with the route’s method', async () => {
    for (const [path, method] of [
      ['/push/subscriptions', 'POST'],
      ['/push/subscriptions/sub_1', 'DELETE'],
      ['/bff_v001/push/vapid-public-key', 'GET'],
    ] as const) {
      const res = await request(fx.baseUrl, {
        method: 'OPTIONS',
        path,
        headers: { origin: WEB_ORIGIN, 'access-control-request-method': method },
      });
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
      expect(res.headers['access-control-allow-methods']).toBe(method);
    }
  });
});

describe('DELETE /push/subscriptions/{id} (issue 40)', () => {
  it('deletes with the authorised account and recipient; another account’s key cannot', async () => {
    const recipient = newRecipient();
    const made = await subscribe(bodyOf(recipient, { subscription: subscription(6) }));
    const id = made.json.id as string;
    const del = (apiKey: string, who = recipient, extra = '') =>
      request(fx.baseUrl, {
        method: 'DELETE',
        path: `/push/subscriptions/${id}?api_key=${apiKey}&recipient=${who}${extra}`,
      });
    got.length = 0;
    const other = await del(KEYS.accountB);
    expect(other.status).toBe(404);
    expect(got.at(-1)).toEqual({ v: 1, op: 'unsubscribe', account_id: ACCOUNT_B, id, recipient });
    expect((await del(KEYS.mobile, newRecipient())).status).toBe(404);
    expect((await del(DISPATCH_ONLY)).json.error.code).toBe('scope_denied');
    expect((await del(TOKENS)).json.error.code).toBe('missing_token');
    expect(stored.has(id)).toBe(true);
    const ok = await del(KEYS.mobile);
    expect(ok.status).toBe(204);
    expect(ok.text).toBe('');
    expect(stored.has(id)).toBe(false);
    expect((await del(KEYS.mobile)).status).toBe(404);
  });

  it('a token-requiring key deletes with the recipient’s token', async () => {
    const recipient = newRecipient();
    const jwt = await token(recipient);
    const made = await subscribe(
      bodyOf(recipient, { api_key: TOKENS, token: jwt, subscription: subscription(7) }),
    );
    expect(made.status).toBe(201);
    const res = await request(fx.baseUrl, {
      method: 'DELETE',
      path: `/bff_v001/push/subscriptions/${made.json.id}?api_key=${TOKENS}&recipient=${recipient}&token=${jwt}`,
    });
    expect(res.status).toBe(204);
  });
});
