import { LiveReply, subjects } from '@herald/proto';
import { type NatsRequester, replyJson } from '@herald/queue';
import type { MsgHdrs } from 'nats';

export type LiveOutcome =
  /** An edge wrote the event to at least one socket. */
  | { kind: 'sent'; sockets: number }
  /** Nobody subscribes to the recipient's live subject: no socket anywhere. */
  | { kind: 'offline' }
  /**
   * An edge may hold a socket but did not answer in time. The event is queued too, so a herald.v1
   * client may receive the same id twice and drops the second (at-least-once, never at-most-zero).
   */
  | { kind: 'timeout' }
  /** The request failed another way (connection closing, malformed reply); queueing decides. */
  | { kind: 'error'; reason: string };

export interface LiveEvent {
  account: string;
  recipient: string;
  /** The payload's original JSON text as UTF-8 bytes. */
  payload: Uint8Array;
  headers: MsgHdrs;
}

/** Pushes an event to every edge holding a socket of the recipient; the first reply wins. */
export async function pushLive(
  requester: NatsRequester,
  event: LiveEvent,
  timeoutMs: number,
): Promise<LiveOutcome> {
  const outcome = await requester.request(
    subjects.live(event.account, event.recipient),
    event.payload,
    event.headers,
    timeoutMs,
  );
  switch (outcome.kind) {
    case 'no_responders':
      return { kind: 'offline' };
    case 'timeout':
    case 'error':
      return outcome;
    case 'reply': {
      const parsed = LiveReply.safeParse(replyJson(outcome.msg));
      return parsed.success
        ? { kind: 'sent', sockets: parsed.data.sockets }
        : { kind: 'error', reason: 'malformed live reply' };
    }
  }
}
