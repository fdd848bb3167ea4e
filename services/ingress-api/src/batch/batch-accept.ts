import {
  HeraldError,
  type NotifyRequest,
  type PushContent,
  parseNotifyRequest,
} from '@herald/proto';
import { type AcceptInput, pushOf } from '../accept.js';
import { validateIdempotencyKey } from '../idempotency.js';
import { memberValue, payloadOf, scanOrRefuse } from '../json-body.js';
import { type ScannedBatch, scanBatchJson } from './batch-json.js';

/** One event of an accepted batch: ready to deliver, or refused on its own. */
export type AcceptedEvent =
  | { ok: true; recipient: string; payload: Uint8Array; push: PushContent | undefined }
  | { ok: false; error: HeraldError };

/** A batch whose body and headers passed every whole-request check that needs no other service. */
export interface AcceptedBatch {
  request: Pick<NotifyRequest, 'api_key' | 'client'>;
  /** One entry per event, in order; a bad event is refused alone. */
  events: AcceptedEvent[];
  idempotencyKey: string | undefined;
}

export interface BatchLimits {
  /** Largest payload of one event (PAYLOAD_LIMIT_BYTES). */
  payloadLimitBytes: number;
  /** Most events per batch (BATCH_MAX_EVENTS). */
  maxEvents: number;
}

const SHAPE =
  'send a JSON object with api_key, client and events (an array of {recipient, payload})';
/** A valid recipient standing in while only api_key and client are checked. */
const ANY_RECIPIENT = '00000000-0000-4000-8000-000000000000';

/**
 * Step 1 of a batch dispatch: parse and validate. The body is scanned once; only the small fields
 * are decoded, and each payload stays a view into the body. Whole-request faults throw (the
 * single dispatch's codes and messages); a fault of one event is kept in its slot.
 */
export function acceptBatch(input: AcceptInput, limits: BatchLimits): AcceptedBatch {
  const { body } = input;
  const scanned = scanOrRefuse(body, scanBatchJson, SHAPE);
  if (scanned.kind !== 'object') {
    throw new HeraldError('invalid_json', `The body must be a JSON object: ${SHAPE}`, {
      field: 'body',
    });
  }
  const { api_key, client } = parseNotifyRequest({
    recipient: ANY_RECIPIENT,
    payload: true,
    api_key: memberValue(body, scanned.members, 'api_key'),
    client: memberValue(body, scanned.members, 'client'),
  });
  const events = eventsOf(scanned, limits.maxEvents);
  const accepted = events.map((event, index): AcceptedEvent => {
    try {
      if (event.kind !== 'object') {
        throw new HeraldError(
          'invalid_field',
          'Each event must be a JSON object with recipient and payload',
          {
            field: `events[${index}]`,
          },
        );
      }
      const payloadSpan = event.members.get('payload');
      // parseNotifyRequest checks a valid event without zod (proto/notify.ts), the rest with it.
      const { recipient } = parseNotifyRequest({
        recipient: memberValue(body, event.members, 'recipient'),
        payload: payloadSpan ? true : undefined,
        api_key,
        client,
      });
      return {
        ok: true,
        recipient,
        payload: payloadOf(body, payloadSpan, limits.payloadLimitBytes),
        push: pushOf(body, event.members),
      };
    } catch (err) {
      if (!(err instanceof HeraldError)) throw err;
      return { ok: false, error: err };
    }
  });
  const idempotencyKey = validateIdempotencyKey(input.idempotencyKey);
  return { request: { api_key, client }, events: accepted, idempotencyKey };
}

function eventsOf(scanned: Extract<ScannedBatch, { kind: 'object' }>, maxEvents: number) {
  if (!scanned.members.has('events')) {
    throw new HeraldError('missing_field', `events is required: ${SHAPE}`, { field: 'events' });
  }
  const events = scanned.events;
  if (events === undefined || events.length === 0) {
    throw new HeraldError(
      'invalid_field',
      `events must be a non-empty array of {recipient, payload}: ${SHAPE}`,
      { field: 'events' },
    );
  }
  if (events.length > maxEvents) {
    throw new HeraldError(
      'payload_too_large',
      `events holds ${events.length} events but a batch may carry at most ${maxEvents} (BATCH_MAX_EVENTS): split it into several batches`,
      { field: 'events' },
    );
  }
  return events;
}
