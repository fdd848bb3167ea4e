import { type NatsRequester, replyJson } from '@herald/nats';
import { type LiveReply, subjects } from '@herald/proto';
import type { MsgHdrs } from 'nats';

export type LiveOutcome =
  /** An edge wrote the event to at least one socket. */
  | { kind: 'sent'; sockets: number }
  /**
   * Nobody subscribes to the recipient's live subject (no socket anywhere), or the edge holding
   * them answered 0: no socket of theirs can prove it any more.
   */
  | { kind: 'offline' }
  /**
   * An edge holds the recipient but did not answer in time (LIVE_TIMEOUT_MS + LIVE_PROOF_WAIT_MS:
   * a dead edge NATS has not dropped yet, or an edge far behind). The event is queued too, so a
   * herald.v1 client may receive the same id twice and drops the second (at-least-once).
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
  /** `subjects.live(account, recipient)` when the caller has it already; built here when absent. */
  subject?: string | undefined;
}

/**
 * Pushes an event to every edge holding a socket of the recipient; the first reply wins. Nobody
 * subscribed is known at once (nats-server's no-responders status); otherwise an edge holds the
 * recipient and answers when a socket proved receipt or none can, so `timeoutMs` is the whole
 * proof budget (LIVE_TIMEOUT_MS + LIVE_PROOF_WAIT_MS), not a guess at the round trip.
 */
export async function pushLive(
  requester: NatsRequester,
  event: LiveEvent,
  timeoutMs: number,
): Promise<LiveOutcome> {
  const outcome = await requester.request(
    event.subject ?? subjects.live(event.account, event.recipient),
    event.payload,
    event.headers,
    timeoutMs,
  );
  switch (outcome.kind) {
    case 'no_responders':
      return OFFLINE;
    case 'timeout':
    case 'error':
      return outcome;
    case 'reply': {
      const sockets = liveReplySockets(replyJson(outcome.msg));
      if (sockets === undefined) return { kind: 'error', reason: 'malformed live reply' };
      return sockets === 0 ? OFFLINE : { kind: 'sent', sockets };
    }
  }
}

/**
 * The `sockets` of a reply that is a {@link LiveReply}, else undefined: the schema's checks by
 * hand, since every live event's reply passes here and zod's parse of it was measurable.
 */
export function liveReplySockets(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { v, sockets } = value as { v?: unknown; sockets?: unknown };
  return v === 1 && Number.isInteger(sockets) && (sockets as number) >= 0
    ? (sockets as number)
    : undefined;
}

const OFFLINE: LiveOutcome = { kind: 'offline' };
