import { z } from 'zod';
import { PUSHER_APP_ID, PUSHER_APP_KEY, PusherUserChannel, PusherUserIds } from './pusher.js';

/**
 * The account API's Pusher apps (issue 41, docs/api.md "Pusher protocol"): what
 * `/v1/pusher/apps` takes and answers, and what the admin CLI's `pusher-app` prints with `--json`.
 * The secret appears only in {@link PusherAppCreated} and {@link PusherAppRotated}: shown once.
 */

/** An app as lists show it: never its secret. */
export const PusherAppView = z.object({
  app_id: z.string().regex(PUSHER_APP_ID),
  key: z.string().regex(PUSHER_APP_KEY),
  /** The Herald key it is bound to (its plan, caps, domain, scope and rate limits apply). */
  key_id: z.string(),
  user_ids: PusherUserIds,
  user_channel: z.string().nullable(),
  /** ISO 8601, UTC. */
  created_at: z.string(),
});
export type PusherAppView = z.infer<typeof PusherAppView>;

/** `GET /v1/pusher/apps`. */
export const PusherAppList = z.object({ apps: z.array(PusherAppView) });
export type PusherAppList = z.infer<typeof PusherAppList>;

/** `POST /v1/pusher/apps`'s body; every field optional. */
export const PusherAppCreate = z.strictObject({
  key_id: z
    .string({ error: 'key_id must be a string: the id of one of your keys (GET /v1/keys)' })
    .optional(),
  user_ids: PusherUserIds.optional(),
  user_channel: PusherUserChannel.nullable().optional(),
});
export type PusherAppCreate = z.infer<typeof PusherAppCreate>;

/** `POST /v1/pusher/apps`'s 201 answer: the app with its secret, shown this once. */
export const PusherAppCreated = PusherAppView.extend({ secret: z.string().min(1) });
export type PusherAppCreated = z.infer<typeof PusherAppCreated>;

/** `POST /v1/pusher/apps/:app_id/rotate-secret`: the new secret, shown once; the old one stops. */
export const PusherAppRotated = z.object({
  app_id: z.string().regex(PUSHER_APP_ID),
  key: z.string().regex(PUSHER_APP_KEY),
  secret: z.string().min(1),
});
export type PusherAppRotated = z.infer<typeof PusherAppRotated>;

/** `GET /v1/pusher/apps/:app_id/users/:user_id`: the recipient a Pusher user id maps to. */
export const PusherUserMapping = z.object({ user_id: z.string(), recipient: z.string() });
export type PusherUserMapping = z.infer<typeof PusherUserMapping>;
