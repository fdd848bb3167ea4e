import { PUSHER_APP_SUBJECT, PusherAppCreated, PusherAppReply } from '@herald/proto';
import type { PusherAppObject } from '@herald/testkit';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useStack } from './fixtures.js';

/**
 * The test kit's `createPusherApp` (issue 41) against auth as a process: through the account API
 * for an account with a session, through `pusher-app create` for one made by support; each app
 * then answers rt.auth.pusher to the socket edge's and ingress's own NATS users.
 */

const codec = JSONCodec();
const stack = useStack({ services: ['auth'] });
let edge: NatsConnection;
let ingress: NatsConnection;

beforeAll(async () => {
  [edge, ingress] = await Promise.all([
    connect(stack().nats.connectOptions('socket-edge')),
    connect(stack().nats.connectOptions('ingress-api')),
  ]);
});
afterAll(async () => {
  await Promise.all([edge?.close(), ingress?.close()]);
});

async function lookup(nc: NatsConnection, by: object): Promise<PusherAppReply> {
  const msg = await nc.request(PUSHER_APP_SUBJECT, codec.encode({ v: 1, ...by }), {
    timeout: 10_000,
  });
  return PusherAppReply.parse(codec.decode(msg.data));
}

async function answersAsItself(app: PusherAppObject, account: string): Promise<void> {
  PusherAppCreated.parse(app);
  for (const [nc, by] of [
    [edge, { key: app.key }],
    [ingress, { app_id: app.app_id }],
  ] as const) {
    const reply = await lookup(nc, by);
    expect(reply).toMatchObject({
      ok: true,
      app: { app_id: app.app_id, key: app.key, secret: app.secret, account_id: account },
      key: { id: app.key_id, account_id: account },
    });
  }
}

describe('testkit createPusherApp', () => {
  it('makes an app through the account API, bound to the given key', async () => {
    const { id } = await stack().createAccount();
    const key = await stack().createKey({
      account: id,
      kind: 'test',
      client: 'web',
      domain: 'https://app.example.com',
    });
    const app = await stack().createPusherApp({
      account: id,
      keyId: key.id,
      userIds: 'any',
      userChannel: 'private-App.Models.User.{id}',
    });
    expect(app).toMatchObject({
      key_id: key.id,
      user_ids: 'any',
      user_channel: 'private-App.Models.User.{id}',
    });
    await answersAsItself(app, id);
  });

  it('makes an app with the admin CLI for a paid account, bound to its only Live key', async () => {
    const { id } = await stack().createAccount({ plan: 'hobby' });
    const key = await stack().createKey({ account: id, kind: 'live', client: 'mobile' });
    const app = await stack().createPusherApp({ account: id });
    expect(app).toMatchObject({ key_id: key.id, user_ids: 'uuid', user_channel: null });
    await answersAsItself(app, id);
  });
});
