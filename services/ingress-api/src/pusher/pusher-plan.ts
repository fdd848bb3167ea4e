import { pusherRecipient } from '@herald/access';
import {
  HeraldError,
  type PusherApp,
  type PusherChannelMessage,
  pusherSubjects,
  SERVER_TO_USER_PREFIX,
  userOfChannel,
} from '@herald/proto';
import type { PusherEvent } from './pusher-request.js';

/**
 * What each (event, channel) of a Pusher request becomes (issue 41): a channel that is a user's
 * (`#server-to-user-<id>`, or one matching the app's user channel template) is a durable Herald
 * event for that user's recipient, its payload the envelope `{"event","channel","data"}`; any
 * other channel is a live fan-out message on `rt.pch.<account>.<app_id>.<channel>`, at most once.
 * The account is always the app's, never the request's.
 */
export type PusherDelivery =
  | { kind: 'durable'; recipient: string; userId: string; payload: Uint8Array }
  | { kind: 'channel'; subject: string; message: PusherChannelMessage };

export function planDeliveries(
  events: readonly PusherEvent[],
  app: Pick<PusherApp, 'app_id' | 'account_id' | 'user_ids' | 'user_channel'>,
  payloadLimitBytes: number,
): PusherDelivery[] {
  const out: PusherDelivery[] = [];
  for (const event of events) {
    for (const channel of event.channels) {
      const userId = userOf(app, channel);
      if (userId === undefined) {
        out.push({
          kind: 'channel',
          subject: pusherSubjects.channel(app.account_id, app.app_id, channel),
          message: {
            v: 1,
            event: event.name,
            channel,
            data: event.data,
            ...(event.socket_id === undefined ? {} : { socket_id: event.socket_id }),
          },
        });
        continue;
      }
      const recipient = recipientOf(app, userId);
      const payload = Buffer.from(
        JSON.stringify({ event: event.name, channel, data: event.data }),
        'utf8',
      );
      if (payload.byteLength > payloadLimitBytes) {
        throw new HeraldError(
          'payload_too_large',
          `The event to ${channel} is ${payload.byteLength} bytes as Herald stores it ({"event","channel","data"}, JSON-escaped), over PAYLOAD_LIMIT_BYTES (${payloadLimitBytes}): send less data`,
          { field: 'data' },
        );
      }
      out.push({ kind: 'durable', recipient, userId, payload });
    }
  }
  return out;
}

/** The user a channel is durable for: `#server-to-user-<id>`, or the app's user channel's id. */
export function userOf(app: Pick<PusherApp, 'user_channel'>, channel: string): string | undefined {
  if (channel.startsWith(SERVER_TO_USER_PREFIX)) return channel.slice(SERVER_TO_USER_PREFIX.length);
  return userOfChannel(app.user_channel, channel);
}

/** A user id's recipient under the app's `user_ids` mode; a `uuid` app refuses any other id. */
export function recipientOf(app: Pick<PusherApp, 'app_id' | 'user_ids'>, userId: string): string {
  const recipient = pusherRecipient(app.app_id, userId, app.user_ids);
  if (recipient === undefined) {
    throw new HeraldError(
      'invalid_recipient',
      `User id ${JSON.stringify(userId.slice(0, 80))} is not a UUID v4, and app ${app.app_id} takes only UUID v4 user ids (--user-ids uuid): send the user's UUID, or make the app with --user-ids any`,
      { field: 'user_id' },
    );
  }
  return recipient;
}
