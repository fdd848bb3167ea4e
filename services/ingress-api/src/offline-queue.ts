import {
  JS_DESC_MAX_MSGS_PER_SUBJECT,
  JS_ERR_INSUFFICIENT_RESOURCES,
  JS_ERR_MAX_MSGS_PER_SUBJECT,
  JS_ERR_STREAM_STORE_FAILED,
  QUEUE_STREAM,
  type QueuedNotice,
  subjects,
} from '@herald/proto';
import type { JetStreamClient, MsgHdrs, NatsConnection } from 'nats';

export type QueueOutcome =
  | { kind: 'stored'; seq: number; duplicate: boolean }
  /** The recipient already has the per-recipient cap of events queued; nothing was dropped. */
  | { kind: 'recipient_full' }
  /** The whole stream (max_bytes / max_msgs) or the server's JetStream storage is full. */
  | { kind: 'store_full'; description: string }
  /** JetStream did not answer, is disabled, or the stream is missing. */
  | { kind: 'error'; reason: string };

export interface QueuedEvent {
  account: string;
  recipient: string;
  id: string;
  payload: Uint8Array;
  headers: MsgHdrs;
  /** JetStream dedup id: `<account>:<idempotency-key>`, or the event id. */
  msgId: string;
}

/**
 * Stores an event on the recipient's queue subject, then announces it on `rt.queued.<a>.<r>`, so an
 * edge that holds a socket opened after its connect-time queue check still drains it.
 */
export async function enqueue(
  nc: NatsConnection,
  js: JetStreamClient,
  event: QueuedEvent,
  timeoutMs: number,
): Promise<QueueOutcome> {
  let ack: { seq: number; duplicate: boolean };
  try {
    ack = await js.publish(subjects.queue(event.account, event.recipient), event.payload, {
      msgID: event.msgId,
      headers: event.headers,
      expect: { streamName: QUEUE_STREAM },
      timeout: timeoutMs,
    });
  } catch (err) {
    return classifyPublishError(err);
  }
  const notice: QueuedNotice = { v: 1, id: event.id };
  try {
    nc.publish(subjects.queued(event.account, event.recipient), JSON.stringify(notice));
  } catch {
    // The event is stored; an edge connecting later finds it with its connect-time check.
  }
  return { kind: 'stored', seq: ack.seq, duplicate: ack.duplicate };
}

/** 10077 is JetStream's generic "store failed": only these descriptions mean a limit was hit. */
const STREAM_LIMIT = /^maximum (messages|bytes) exceeded$/;

/** Maps a failed JetStream publish to what the caller is told (exported for its unit test). */
export function classifyPublishError(err: unknown): QueueOutcome {
  const apiError = (err as { api_error?: { err_code?: number; description?: string } }).api_error;
  const code = apiError?.err_code;
  const description = apiError?.description ?? '';
  // 10077 covers both limits on 2.9.10 (see proto stream.ts); the description tells them apart.
  if (code === JS_ERR_MAX_MSGS_PER_SUBJECT && description === JS_DESC_MAX_MSGS_PER_SUBJECT) {
    return { kind: 'recipient_full' };
  }
  if (
    (code === JS_ERR_STREAM_STORE_FAILED && STREAM_LIMIT.test(description)) ||
    code === JS_ERR_INSUFFICIENT_RESOURCES
  ) {
    return { kind: 'store_full', description };
  }
  return { kind: 'error', reason: apiError ? `${code}: ${description}` : String(err) };
}
