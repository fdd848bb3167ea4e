import { LiveReply, subjects } from '@herald/proto';
import { ErrorCode, type MsgHdrs, type NatsConnection } from 'nats';

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
  nc: NatsConnection,
  event: LiveEvent,
  timeoutMs: number,
): Promise<LiveOutcome> {
  let data: Uint8Array;
  try {
    const reply = await nc.request(subjects.live(event.account, event.recipient), event.payload, {
      timeout: timeoutMs,
      headers: event.headers,
    });
    data = reply.data;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === ErrorCode.NoResponders) return { kind: 'offline' };
    if (code === ErrorCode.Timeout) return { kind: 'timeout' };
    return { kind: 'error', reason: String(err) };
  }
  const parsed = LiveReply.safeParse(parseJson(data));
  return parsed.success
    ? { kind: 'sent', sockets: parsed.data.sockets }
    : { kind: 'error', reason: 'malformed live reply' };
}

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}
