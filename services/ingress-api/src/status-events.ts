import { type KeyPush, type PushContent, StatusEvent } from '@herald/proto';
import type { StatusBatcher } from '@herald/status-client';
import type { Outcome } from './outcome.js';
import { pushSpecOf } from './push-content.js';

interface Dispatched {
  key: {
    id: string;
    account_id: string;
    webhook_payload?: boolean | undefined;
    push?: KeyPush | undefined;
  };
  recipient: string;
  /**
   * The sender's payload, its JSON text's bytes: carried only for a key with `webhook_payload`,
   * or on the push spec of a key with `push`.
   */
  payload: Uint8Array;
  /** The event's `push` field: read only for a key with `push`. */
  push?: PushContent | undefined;
  /** A topic event's copy: its record names the topic event (`topic_id`). */
  topic?: { id: string } | undefined;
}

type Deliver<T extends Dispatched, P> = (
  target: T,
  id: string,
  msgId: string,
  pushed?: P,
) => Promise<Outcome>;

/** Most characters of a record's `payload_json`, as proto's StatusEvent takes it. */
const PAYLOAD_JSON_MAX = StatusEvent.shape.payload_json.unwrap().maxLength ?? 0;

/**
 * Wraps the dispatch path's `deliver` so that each outcome it answers (sent, queued, or refused
 * or failed) is published as a status record. The records of one event-loop turn leave as one
 * NATS message per account into the status stream (`StatusBatcher`), held until the stream acks
 * it and re-sent until then (`StatusAcks`, bounded): the dispatch never waits on the status
 * pipeline, and nothing here can fail a dispatch (a lost record costs a figure on the dashboard
 * and the event's webhooks, never the event).
 *
 * A key made with `--webhook-payload` (issue 39) opts its payloads into its account's webhook
 * bodies: its `sent` and `pending` records carry the payload's JSON text and leave alone, one
 * StatusEvent message each, so a batch of small records never grows by a payload. A record whose
 * payload would not fit (`maxAloneBytes`, nats-server's max_payload; or proto's bound) goes
 * without it, in the batch: the status is worth more than the body's copy of the payload.
 *
 * A key made with `--push-after-ms` (issue 40): its `pending` record carries the event's
 * PushSpec (`push`), from which the status service decides the push fallback, and leaves
 * alone too; its `sent` record (a socket proved the event) carries none. A key with both carries
 * both; when the two do not fit, the push spec stays and the payload's copy goes. A key with
 * neither costs two property reads per event, and its records are what they always were.
 */
export function withStatusEvents<T extends Dispatched, P>(
  batcher: Pick<StatusBatcher, 'addJson' | 'addAlone'>,
  deliver: Deliver<T, P>,
  maxAloneBytes: () => number = () => Number.POSITIVE_INFINITY,
): Deliver<T, P> {
  return async (target, id, msgId, pushed) => {
    const outcome = await deliver(target, id, msgId, pushed);
    // A topic copy that failed for now (JetStream or NATS away) is not its final word: its chunk
    // comes back and the retry's outcome is recorded (a `failed` first would outrank it). A copy
    // refused for good (4xx, 507) is recorded as any event's.
    if (outcome.kind === 'failed' && target.topic !== undefined) return outcome;
    const at = Date.now();
    const account = target.key.account_id;
    if (target.key.webhook_payload === true || target.key.push !== undefined) {
      const alone = aloneRecord(outcome, target, id, at, maxAloneBytes());
      if (alone !== undefined) {
        batcher.addAlone(account, alone);
        return outcome;
      }
    }
    batcher.addJson(account, statusJson(outcome, target, id, at));
    return outcome;
  };
}

/**
 * The status record of an outcome as JSON: byte for byte `JSON.stringify` of the StatusEvent
 * literal `{ v, id, account_id, key_id, recipient, at, status, reason? }`, written as one template: every event of every
 * dispatch path writes one record, and stringifying the object was the status path's largest
 * cost (docs/benchmarks-history.md, branch i31o).
 */
export function statusJson(
  outcome: Outcome,
  target: Omit<Dispatched, 'payload'>,
  id: string,
  at: number,
): string {
  const reason = reasonOf(outcome);
  return `{"v":1,"id":${str(id)},"account_id":${str(target.key.account_id)},"key_id":${str(target.key.id)},"recipient":${str(target.recipient)},"at":${at},"status":"${statusOfKind(outcome)}"${reason === undefined ? '' : `,"reason":${str(reason)}`}${target.topic === undefined ? '' : `,"topic_id":${str(target.topic.id)}`}}`;
}

/**
 * A record that leaves alone: a `sent` or `pending` record of a `webhook_payload` key with the
 * payload's JSON text as `payload_json`, and a `pending` record of a `push` key with its `push`
 * spec (both, for a key with both). Undefined when it would carry neither (any other outcome, a
 * `sent` record of a push-only key, a payload past proto's bound) or would pass `maxBytes` even
 * with the push spec alone: that record goes batched, as a plain key's.
 */
export function aloneRecord(
  outcome: Outcome,
  target: Dispatched,
  id: string,
  at: number,
  maxBytes: number,
): string | undefined {
  if (outcome.kind !== 'sent' && outcome.kind !== 'queued') return undefined;
  const { key } = target;
  const keyPush = outcome.kind === 'queued' ? key.push : undefined;
  const { payload } = target;
  const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
  const withPayload =
    key.webhook_payload === true && text.length <= PAYLOAD_JSON_MAX
      ? `,"payload_json":${JSON.stringify(text)}`
      : '';
  const withPush =
    keyPush === undefined
      ? ''
      : `,"push":${JSON.stringify(pushSpecOf(keyPush, target.push, text))}`;
  const plain = statusJson(outcome, target, id, at).slice(0, -1);
  // The push spec before the payload's copy: it decides a notification, the copy only fills a body.
  for (const extra of [withPayload + withPush, withPush]) {
    if (extra === '') continue;
    const json = `${plain}${extra}}`;
    if (Buffer.byteLength(json) <= maxBytes) return json;
  }
  return undefined;
}

// Refusals of the request (a full queue) are outcomes too: the event was not taken, so failed.
function statusOfKind(outcome: Outcome): StatusEvent['status'] {
  return outcome.kind === 'sent' ? 'sent' : outcome.kind === 'queued' ? 'pending' : 'failed';
}

function reasonOf(outcome: Outcome): string | undefined {
  return outcome.kind === 'refused' || outcome.kind === 'failed' ? outcome.code : undefined;
}

/** Ids, account and key ids, recipients and codes are plain text: quoted as is; else escaped. */
const PLAIN = /^[\w.:@+-]*$/;

function str(value: string): string {
  return PLAIN.test(value) ? `"${value}"` : JSON.stringify(value);
}
