import {
  HeraldError,
  parseWebhookEvents,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '@herald/proto';
import { INSTANT_FORMS, parseInstant } from '../dates.js';

/**
 * `--events a,b` (the CLI) as the service takes it: each name checked, duplicates dropped; empty
 * means every type. Throws naming `events` with the types it takes.
 */
export function parseEventsFlag(list: string): WebhookEventType[] {
  try {
    return parseWebhookEvents(list);
  } catch {
    throw new HeraldError(
      'invalid_field',
      `"${list}" is not a comma list of event types: use any of ${WEBHOOK_EVENT_TYPES.join(', ')} (leave it out for every type)`,
      { field: 'events' },
    );
  }
}

/**
 * `since` of a replay, in epoch ms: an ISO 8601 date or date-time with its zone, not before 1970.
 * Throws naming `since`.
 */
export function parseSince(value: string): number {
  const hint = `give ${INSTANT_FORMS}: every transition at or after it is sent again`;
  const at = parseInstant(value, 'since', hint).getTime();
  if (at < 0) {
    throw new HeraldError('invalid_field', `since "${value}" is before 1970: ${hint}`, {
      field: 'since',
    });
  }
  return at;
}
