import { HeraldError, PUSHER_APP_ID, PusherUserChannel, PusherUserIds } from '@herald/proto';

/** The checks of what a Pusher app request names, each error naming its field and the fix. */

export const APPS_HINT =
  'give an app id `pusher-app list --account ID` (GET /v1/pusher/apps) prints';

/** `user_ids`: `uuid` (the default) or `any`. */
export function parseUserIds(value: string | undefined): PusherUserIds {
  if (value === undefined) return 'uuid';
  const parsed = PusherUserIds.safeParse(value);
  if (!parsed.success) {
    throw new HeraldError('invalid_field', `${parsed.error.issues[0]?.message} (got "${value}")`, {
      field: 'user_ids',
    });
  }
  return parsed.data;
}

/** `user_channel`: proto's PusherUserChannel template, or null (the default). */
export function parseUserChannel(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  const parsed = PusherUserChannel.safeParse(value);
  if (!parsed.success) {
    throw new HeraldError(
      'invalid_field',
      `${parsed.error.issues[0]?.message ?? 'user_channel is invalid'} (got "${value}")`,
      { field: 'user_channel' },
    );
  }
  return parsed.data;
}

/** An app id as given: digits, or `invalid_field` naming `app_id`. */
export function parseAppId(value: string): string {
  if (!PUSHER_APP_ID.test(value)) {
    throw new HeraldError('invalid_field', `app_id must be digits (got "${value}"): ${APPS_HINT}`, {
      field: 'app_id',
    });
  }
  return value;
}
