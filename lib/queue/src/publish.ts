import type { Publisher } from '@herald/nats';
import {
  EventMsgHdrs,
  isRecipientFull,
  isStoreFull,
  jsApiError,
  type NatsRequester,
  replyJson,
} from '@herald/nats';
import { type QueuedNotice, type RecipientSubjects, subjects } from '@herald/proto';
import type { MsgHdrs } from 'nats';

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
  /** The event's headers (id, timestamp); the dedup id and expected stream are added to them. */
  headers: MsgHdrs;
  /** JetStream dedup id: `<account>:<idempotency-key>`, or the event id. */
  msgId: string;
  /** The recipient's partition stream (QueueLayout.streamOf): the publish must land there. */
  stream: string;
  /**
   * The recipient's queue and notice subjects when the caller has them already
   * (`recipientSubjects`, one check of the two tokens per event); built here when absent.
   */
  subjects?: Pick<RecipientSubjects, 'queue' | 'queued'> | undefined;
}

/** JetStream's publish headers (nats.js keeps its own copies internal). */
const MSG_ID = 'Nats-Msg-Id';
const EXPECTED_STREAM = 'Nats-Expected-Stream';

interface PubAck {
  seq?: number;
  duplicate?: boolean;
  error?: { code?: number; err_code?: number; description?: string };
}

/**
 * Stores an event on the recipient's queue subject, then announces it on `rt.queued.<a>.<r>`, so an
 * edge that holds a socket opened after its connect-time queue check still drains it.
 *
 * The publish is JetStream's wire protocol spelled out (a request to the subject with the dedup id
 * and the expected stream in headers, answered by a PubAck) over the shared NatsRequester, rather
 * than `js.publish()`, which builds an Error at the end of every request.
 */
export async function enqueue(
  /** Where the notice goes: the connection, or ingress's TurnPublisher. */
  nc: Publisher,
  requester: NatsRequester,
  event: QueuedEvent,
  timeoutMs: number,
): Promise<QueueOutcome> {
  // The caller's headers, extended in place rather than copied: ingress builds them once per event
  // and its live push has already sent them (nats.js encoded them when it was answered).
  const h = event.headers;
  if (h instanceof EventMsgHdrs) {
    h.add(MSG_ID, event.msgId).add(EXPECTED_STREAM, event.stream);
  } else {
    h.set(MSG_ID, event.msgId);
    h.set(EXPECTED_STREAM, event.stream);
  }
  const outcome = await requester.request(
    event.subjects?.queue ?? subjects.queue(event.account, event.recipient),
    event.payload,
    h,
    timeoutMs,
  );
  if (outcome.kind === 'no_responders')
    return {
      kind: 'error',
      reason: 'no responders: JetStream is disabled or no stream takes the subject',
    };
  if (outcome.kind !== 'reply')
    return { kind: 'error', reason: outcome.kind === 'error' ? outcome.reason : 'timeout' };
  const ack = (replyJson(outcome.msg) ?? {}) as PubAck;
  if (ack.error) return classifyPublishError({ api_error: ack.error });
  if (typeof ack.seq !== 'number')
    return { kind: 'error', reason: 'malformed JetStream publish ack' };
  const notice: QueuedNotice = { v: 1, id: event.id };
  try {
    // The string: ingress's TurnPublisher writes it straight into its turn's bytes.
    nc.publish(
      event.subjects?.queued ?? subjects.queued(event.account, event.recipient),
      JSON.stringify(notice),
    );
  } catch {
    // The event is stored; an edge connecting later finds it with its connect-time check.
  }
  return { kind: 'stored', seq: ack.seq, duplicate: ack.duplicate === true };
}

/** Maps a failed JetStream publish to what the caller is told (exported for its unit test). */
export function classifyPublishError(err: unknown): QueueOutcome {
  const apiError = jsApiError(err);
  const description = apiError?.description ?? '';
  if (isRecipientFull(apiError)) return { kind: 'recipient_full' };
  if (isStoreFull(apiError)) return { kind: 'store_full', description };
  return { kind: 'error', reason: apiError ? `${apiError.err_code}: ${description}` : String(err) };
}
