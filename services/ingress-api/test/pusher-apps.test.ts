import { PusherAppVerifier } from '@herald/access';
import { createLogger } from '@herald/kit';
import {
  errorReply,
  HeraldError,
  PUSHER_APP_SUBJECT,
  type PusherApp,
  type PusherAppReply,
  subjects,
} from '@herald/proto';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_A, key } from './support/auth-responder.js';

/**
 * lib/access's PusherAppVerifier (issue 41) on a real nats-server, with a stand-in for auth's
 * rt.auth.pusher responder that counts what it is asked: the cache, its invalidation and what it
 * refuses to trust.
 */

let nats: NatsServer;
let peer: NatsConnection;
let nc: NatsConnection;
const logger = createLogger('ingress-api', 'silent');

const APP: PusherApp = {
  app_id: '1234567890',
  key: '0123456789abcdef0123',
  secret: 'f'.repeat(40),
  account_id: ACCOUNT_A,
  key_id: 'key-mobile',
  user_ids: 'uuid',
  user_channel: null,
};

/** What the stand-in answers per lookup, and every lookup it was asked. */
let answer: (lookup: Record<string, unknown>) => PusherAppReply | undefined;
const asked: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  nats = await startNatsServer();
  peer = await connect(nats.connectOptions());
  nc = await connect(nats.connectOptions('ingress-api'));
  peer.subscribe(PUSHER_APP_SUBJECT, {
    callback: (_err, msg) => {
      const lookup = JSON.parse(new TextDecoder().decode(msg.data)) as Record<string, unknown>;
      asked.push(lookup);
      const reply = answer(lookup);
      if (reply) msg.respond(JSON.stringify(reply));
    },
  });
  await peer.flush();
});
afterAll(async () => {
  await nc?.close();
  await peer?.close();
  await nats?.stop();
});

const found = (app: PusherApp = APP): PusherAppReply => ({
  v: 1,
  ok: true,
  app,
  key: key(app.key_id),
});
const unknownApp = () =>
  errorReply(new HeraldError('invalid_api_key', 'unknown app')) as PusherAppReply;

async function refusal(p: Promise<unknown>): Promise<HeraldError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HeraldError);
  return err as HeraldError;
}

describe('PusherAppVerifier', () => {
  it('looks an app up by id or key, once each while cached', async () => {
    answer = () => found();
    asked.length = 0;
    const apps = new PusherAppVerifier(nc, logger, { ttlMs: 60_000 });
    const [a, b] = await Promise.all([
      apps.lookup({ app_id: APP.app_id }),
      apps.lookup({ app_id: APP.app_id }),
    ]);
    expect(a).toEqual({ app: APP, key: key(APP.key_id) });
    expect(b).toEqual(a);
    expect((await apps.lookup({ key: APP.key })).app.app_id).toBe(APP.app_id);
    await apps.lookup({ key: APP.key });
    expect(asked).toEqual([
      { v: 1, app_id: APP.app_id },
      { v: 1, key: APP.key },
    ]);
    apps.close();
  });

  it('drops a cached app on an invalidation of its bound key, and every refusal on pusher_app', async () => {
    answer = (l) => (l.app_id === APP.app_id ? found() : unknownApp());
    asked.length = 0;
    const apps = new PusherAppVerifier(nc, logger, { ttlMs: 60_000, negativeTtlMs: 60_000 });
    await apps.lookup({ app_id: APP.app_id });
    expect((await refusal(apps.lookup({ app_id: '42' }))).code).toBe('invalid_api_key');
    await refusal(apps.lookup({ app_id: '42' }));
    expect(asked).toHaveLength(2);
    // Another key's invalidation drops nothing.
    peer.publish(
      subjects.authInvalidate,
      JSON.stringify({ v: 1, key_id: 'other', reason: 'revoked' }),
    );
    await peer.flush();
    await nc.flush();
    await apps.lookup({ app_id: APP.app_id });
    await refusal(apps.lookup({ app_id: '42' }));
    expect(asked).toHaveLength(2);
    // A new app (reason pusher_app) for the bound key: both asked again.
    peer.publish(
      subjects.authInvalidate,
      JSON.stringify({ v: 1, key_id: APP.key_id, reason: 'pusher_app' }),
    );
    await peer.flush();
    await nc.flush();
    await apps.lookup({ app_id: APP.app_id });
    await refusal(apps.lookup({ app_id: '42' }));
    expect(asked).toHaveLength(4);
    apps.close();
  });

  it('answers 503 while auth is silent, caching nothing, and never trusts another app', async () => {
    answer = () => undefined;
    asked.length = 0;
    const apps = new PusherAppVerifier(nc, logger, { timeoutMs: 200 });
    const silent = await refusal(apps.lookup({ app_id: APP.app_id }));
    expect(silent.code).toBe('unavailable');
    expect(apps.size).toBe(0);
    answer = () => found({ ...APP, app_id: '999' });
    expect((await refusal(apps.lookup({ app_id: APP.app_id }))).code).toBe('unavailable');
    expect(apps.size).toBe(0);
    answer = () => found();
    expect((await apps.lookup({ app_id: APP.app_id })).app).toEqual(APP);
    apps.close();
  });
});
