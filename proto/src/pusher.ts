import { z } from 'zod';
import { VerifiedKey } from './auth.js';
import { ErrorReply } from './error-reply.js';
import { assertToken } from './subjects.js';

/**
 * The Pusher-protocol front door (issue 41): stock pusher-js, Laravel Echo and the `pusher` server
 * library talk to Herald unchanged. A Pusher app (`app_id`, `key`, `secret`) is bound to one of the
 * account's Herald keys (its plan, caps, domain, scope and rate limits apply). The edge serves
 * `wss …/app/{key}`, ingress the signed HTTP API (`POST /apps/{app_id}/…`); both look the app up
 * by one request subject, {@link PUSHER_APP_SUBJECT}, which auth answers with the app (its secret
 * unsealed: the edge checks channel and sign-in signatures, ingress request signatures) and the
 * bound key's verification. An event to a user (`sendToUser`, or the app's user channel) is a
 * Herald event for that user's recipient: durable. Any other channel is live fan-out on
 * {@link pusherSubjects.channel}, at most once, as Pusher's is. docs/api.md, "Pusher protocol".
 */

/** The app lookup's request subject (queue group `herald-auth`); only the edge and ingress ask. */
export const PUSHER_APP_SUBJECT = 'rt.auth.pusher';

/** Pusher's own limits, the defaults of the configurable ones (ingress's `PUSHER_*` settings). */
export const PUSHER_LIMITS = {
  /** Channels one `POST /events` may name. */
  channels: 100,
  /** Events one `POST /batch_events` may hold. */
  batchEvents: 10,
  /** Bytes of one event's `data`. */
  dataBytes: 10_240,
  /** Characters of an event name. */
  eventName: 200,
  /** Characters of a channel name (Pusher's documented maximum). */
  channelName: 164,
  /** Seconds an `auth_timestamp` may be off the server's clock either way. */
  timestampSkewS: 600,
} as const;

/** A channel name's characters (Pusher's, `#` only as the first, for `#server-to-user-…`). */
export const PUSHER_CHANNEL_NAME = /^#?[-a-zA-Z0-9_=@,.;]+$/;
/** An app id: digits, as Pusher's are (safe as a subject token). */
export const PUSHER_APP_ID = /^[0-9]{1,20}$/;
/** An app key: what pusher-js puts in its URL (lower-case hex, 20 characters when Herald makes it). */
export const PUSHER_APP_KEY = /^[0-9a-f]{20}$/;
/** The prefix of the channel pusher-js subscribes to after sign-in: `#server-to-user-<id>`. */
export const SERVER_TO_USER_PREFIX = '#server-to-user-';
/** The Pusher event name a `/notify` payload without its own `event` string goes out as. */
export const HERALD_PUSHER_EVENT = 'herald:event';

/** How an app's user ids map to recipients: a UUID v4 as is, or any id through {@link pusherRecipient}. */
export const PusherUserIds = z.enum(['uuid', 'any'], {
  error: 'user_ids must be "uuid" (user ids are UUID v4 recipients) or "any" (any id, mapped)',
});
export type PusherUserIds = z.infer<typeof PusherUserIds>;

/**
 * A user channel template: a `private-` channel name with one `{id}` where the user id goes
 * (Laravel's notifications: `private-App.Models.User.{id}`). A channel matching it is that user's:
 * an event to it is durable, and a socket authorised to subscribe to it is fed the user's events.
 */
export const PusherUserChannel = z
  .string()
  .max(PUSHER_LIMITS.channelName)
  .refine(
    (t) =>
      t.startsWith('private-') &&
      !t.startsWith('private-encrypted-') &&
      t.split('{id}').length === 2 &&
      PUSHER_CHANNEL_NAME.test(t.replace('{id}', 'x')),
    'user_channel must be a private- channel name with exactly one {id}, e.g. private-App.Models.User.{id}',
  );

/** An app as the edge and ingress use it (the secret in the clear: it never leaves them). */
export const PusherApp = z.object({
  app_id: z.string().regex(PUSHER_APP_ID),
  key: z.string().regex(PUSHER_APP_KEY),
  secret: z.string().min(1),
  account_id: z.string(),
  /** The Herald key the app is bound to. */
  key_id: z.string(),
  user_ids: PusherUserIds,
  /** {@link PusherUserChannel}, or null when only `#server-to-user-<id>` is durable. */
  user_channel: z.string().nullable(),
});
export type PusherApp = z.infer<typeof PusherApp>;

/** `rt.auth.pusher`: look an app up by its key (the socket) or its id (the HTTP API). */
export const PusherAppLookup = z.union([
  z.object({ v: z.literal(1), key: z.string().min(1).max(64) }).strict(),
  z.object({ v: z.literal(1), app_id: z.string().min(1).max(20) }).strict(),
]);
export type PusherAppLookup = z.infer<typeof PusherAppLookup>;

/**
 * The answer: the app and its bound key verified as `rt.auth.verify` would (refusals the same:
 * `key_revoked`, `plan_inactive`, …), or `invalid_api_key` for an unknown app.
 */
export const PusherAppReply = z.discriminatedUnion('ok', [
  z.object({ v: z.literal(1), ok: z.literal(true), app: PusherApp, key: VerifiedKey }),
  ErrorReply,
]);
export type PusherAppReply = z.infer<typeof PusherAppReply>;

/** A live fan-out message on {@link pusherSubjects.channel}: core NATS, at most once. */
export const PusherChannelMessage = z.object({
  v: z.literal(1),
  event: z.string().min(1),
  channel: z.string().min(1),
  data: z.string(),
  /** The publisher's `socket_id`: that socket is skipped, as Pusher does. */
  socket_id: z.string().optional(),
});
export type PusherChannelMessage = z.infer<typeof PusherChannelMessage>;

/** `terminate_connections` on {@link pusherSubjects.terminate}: close the user's Pusher sockets of this app. */
export const PusherTerminate = z.object({ v: z.literal(1), app_id: z.string() });
export type PusherTerminate = z.infer<typeof PusherTerminate>;

/**
 * The Herald payload of a durable Pusher event (to a user, or to the app's user channel): what
 * `/notify` stores, `/events/status` and the SDK show. Its `data` is the string as sent. A `/notify`
 * payload of this shape reaches Pusher sockets as that event too; any other payload goes out as
 * {@link HERALD_PUSHER_EVENT} with the payload's JSON text as `data`.
 */
export const PusherEnvelope = z.object({
  event: z.string().min(1),
  channel: z.string().optional(),
  data: z.string(),
});
export type PusherEnvelope = z.infer<typeof PusherEnvelope>;

/** base64url without padding of the UTF-8 bytes (as Node's Buffer gives it; proto has no Node types). */
function subjectSafe(name: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(name)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export const pusherSubjects = {
  /** A channel's live fan-out: `rt.pch.<account>.<app_id>.<base64url(channel)>` (5 tokens). */
  channel: (account: string, appId: string, channel: string) => {
    if (!PUSHER_APP_ID.test(appId)) throw new TypeError(`app_id must be digits, got ${appId}`);
    return `rt.pch.${assertToken('account', account)}.${appId}.${subjectSafe(channel)}`;
  },
  /** What a permission names for {@link pusherSubjects.channel}. */
  channelPattern: 'rt.pch.*.*.*',
  /**
   * Close a user's Pusher sockets: `rt.pterm.<account>.<recipient>`, matching the recipient's
   * `rt.*.<a>.<r>` the edge already holds.
   */
  terminate: (account: string, recipient: string) =>
    `rt.pterm.${assertToken('account', account)}.${assertToken('recipient', recipient)}`,
  terminatePattern: 'rt.pterm.*.*',
} as const;

/** The user id a channel names under the app's user channel template, or undefined. */
export function userOfChannel(template: string | null, channel: string): string | undefined {
  if (template === null) return undefined;
  const [head = '', tail = ''] = template.split('{id}');
  if (!channel.startsWith(head) || !channel.endsWith(tail)) return undefined;
  const id = channel.slice(head.length, channel.length - tail.length);
  return id.length > 0 && PUSHER_CHANNEL_NAME.test(id) && !id.startsWith('#') ? id : undefined;
}
