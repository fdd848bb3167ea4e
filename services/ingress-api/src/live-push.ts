import { LiveReply, subjects } from '@herald/proto';
import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from 'nats';

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

interface Waiting {
  settle: (outcome: LiveOutcome) => void;
  timer: NodeJS.Timeout;
}

/**
 * Pushes events to the edges holding the recipient's sockets: a NATS request on the recipient's
 * live subject, the first reply wins.
 *
 * It does what `nc.request()` does (one wildcard reply subscription, a token per request, a
 * timer) without its cost on the outcome that matters most: nats.js turns the server's "no
 * responders" status, the answer for every offline recipient, into a NatsError, and building that
 * error (a captured stack) was 12 % of ingress's CPU in the offline benchmark. Here the status
 * message is just read.
 */
export class LivePusher {
  readonly #nc: NatsConnection;
  readonly #prefix = createInbox();
  readonly #waiting = new Map<string, Waiting>();
  #sub: Subscription | undefined;
  #next = 0;

  constructor(nc: NatsConnection) {
    this.#nc = nc;
  }

  push(event: LiveEvent, timeoutMs: number): Promise<LiveOutcome> {
    try {
      this.#sub ??= this.#nc.subscribe(`${this.#prefix}.*`, {
        callback: (err, msg) => {
          if (!err) this.#onReply(msg);
        },
      });
    } catch (err) {
      return Promise.resolve({ kind: 'error', reason: String(err) });
    }
    const token = (this.#next++).toString(36);
    return new Promise<LiveOutcome>((resolve) => {
      const settle = (outcome: LiveOutcome) => {
        const waiting = this.#waiting.get(token);
        if (!waiting) return;
        this.#waiting.delete(token);
        clearTimeout(waiting.timer);
        resolve(outcome);
      };
      const timer = setTimeout(() => settle({ kind: 'timeout' }), timeoutMs);
      this.#waiting.set(token, { settle, timer });
      try {
        this.#nc.publish(subjects.live(event.account, event.recipient), event.payload, {
          reply: `${this.#prefix}.${token}`,
          headers: event.headers,
        });
      } catch (err) {
        settle({ kind: 'error', reason: String(err) });
      }
    });
  }

  #onReply(msg: Msg): void {
    const token = msg.subject.slice(this.#prefix.length + 1);
    const waiting = this.#waiting.get(token);
    if (!waiting) return; // a second edge's answer, or one after the timeout
    // The server answers a request nobody subscribes to with an empty 503 status message.
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      waiting.settle({ kind: 'offline' });
      return;
    }
    const parsed = LiveReply.safeParse(parseJson(msg.data));
    waiting.settle(
      parsed.success
        ? { kind: 'sent', sockets: parsed.data.sockets }
        : { kind: 'error', reason: 'malformed live reply' },
    );
  }
}

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}
