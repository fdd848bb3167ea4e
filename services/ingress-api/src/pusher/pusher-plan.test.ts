import { pusherRecipient } from '@herald/access';
import { HeraldError, PusherEnvelope, pusherSubjects } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { planDeliveries, userOf } from './pusher-plan.js';

const ACCOUNT = '0a0a0a0a-0000-4000-8000-00000000000a';
const USER = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const app = (over: Record<string, unknown> = {}) => ({
  app_id: '1234567890',
  account_id: ACCOUNT,
  user_ids: 'uuid' as const,
  user_channel: 'private-App.Models.User.{id}',
  ...over,
});
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('planDeliveries', () => {
  it("makes a user's channels durable, for the app's recipient, and others a fan-out", () => {
    const plan = planDeliveries(
      [
        {
          name: 'greet',
          data: '{"n":1}',
          channels: [`#server-to-user-${USER}`, `private-App.Models.User.${USER}`, 'news'],
          socket_id: '1.2',
        },
      ],
      app(),
      65_536,
    );
    expect(plan.map((d) => d.kind)).toEqual(['durable', 'durable', 'channel']);
    const [toUser, toUserChannel, fanOut] = plan;
    if (toUser?.kind !== 'durable' || toUserChannel?.kind !== 'durable') throw new Error('kind');
    expect(toUser.recipient).toBe(USER);
    expect(PusherEnvelope.parse(JSON.parse(text(toUser.payload)))).toEqual({
      event: 'greet',
      channel: `#server-to-user-${USER}`,
      data: '{"n":1}',
    });
    expect(JSON.parse(text(toUserChannel.payload)).channel).toBe(`private-App.Models.User.${USER}`);
    expect(fanOut).toEqual({
      kind: 'channel',
      subject: pusherSubjects.channel(ACCOUNT, '1234567890', 'news'),
      message: { v: 1, event: 'greet', channel: 'news', data: '{"n":1}', socket_id: '1.2' },
    });
  });

  it('maps any id through pusherRecipient for an `any` app, and refuses it for a `uuid` app', () => {
    const events = [{ name: 'n', data: 'd', channels: ['#server-to-user-42'] }];
    const [d] = planDeliveries(events, app({ user_ids: 'any' }), 65_536);
    expect(d?.kind === 'durable' && d.recipient).toBe(pusherRecipient('1234567890', '42', 'any'));
    try {
      planDeliveries(events, app(), 65_536);
      throw new Error('expected a refusal');
    } catch (err) {
      expect(err).toBeInstanceOf(HeraldError);
      expect([(err as HeraldError).status, (err as HeraldError).field]).toEqual([400, 'user_id']);
      expect((err as HeraldError).message).toContain('"42"');
    }
  });

  it('refuses with 413 a durable event whose envelope passes PAYLOAD_LIMIT_BYTES', () => {
    const data = '"'.repeat(500);
    const events = [{ name: 'n', data, channels: [`#server-to-user-${USER}`] }];
    const size = JSON.stringify({ event: 'n', channel: `#server-to-user-${USER}`, data }).length;
    expect(planDeliveries(events, app(), size)).toHaveLength(1);
    expect(() => planDeliveries(events, app(), size - 1)).toThrow(/PAYLOAD_LIMIT_BYTES/);
  });

  it('reads the user of a channel only by the prefix or the template', () => {
    expect(userOf(app(), '#server-to-user-x')).toBe('x');
    expect(userOf(app(), 'private-App.Models.User.7')).toBe('7');
    expect(userOf(app(), 'App.Models.User.7')).toBeUndefined();
    expect(userOf(app({ user_channel: null }), 'private-App.Models.User.7')).toBeUndefined();
  });
});
