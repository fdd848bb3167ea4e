import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from 'nats';
import {
  type Answer,
  type NoAnswer,
  noAnswer,
  type ReplySchema,
  settleWithReply,
  type Unanswered,
  whyUnanswered,
} from './json-answer.js';
import type { TurnPublisher } from './turn-publisher.js';

export type RequestOutcome =
  /** The first answer. */
  | { kind: 'reply'; msg: Msg }
  /**
   * `no_responders`: nobody subscribes to the subject (the server's 503 status; for JetStream: no
   * stream or no JetStream); `timeout`; `error`: the request could not be sent (connection closed
   * or draining).
   */
  | Unanswered;

interface Waiting {
  settle: (outcome: RequestOutcome) => void;
  timer: NodeJS.Timeout;
  /** A gathering request's handler of each answer: true once it has every answer it waits for. */
  each?: ((msg: Msg) => boolean) | undefined;
}

/**
 * NATS request/reply as `nc.request()` does it (one wildcard reply subscription, a token and a
 * timer per request, the first answer wins), but never building an Error for an outcome. nats.js
 * turns the server's "no responders" status, the answer for every offline recipient, into a
 * NatsError, and builds a "cancelled" NatsError at the end of every successful request too: a
 * captured stack per offline event, and one more per request. Outcomes here are
 * plain values. Used by ingress (live push, JetStream publish) and the edge (its queue lookup).
 * `requestJson` is the one typed request to a Herald service: its data, or a HeraldError for an
 * error reply or no answer (built only then, never for a request that was answered).
 *
 * With a TurnPublisher, requests leave through it: a turn's requests share one socket write.
 */
export class NatsRequester {
  readonly #nc: NatsConnection;
  readonly #prefix = createInbox();
  readonly #waiting = new Map<string, Waiting>();
  #sub: Subscription | undefined;
  readonly #publisher: TurnPublisher | undefined;
  #next = 0;

  constructor(nc: NatsConnection, opts: { publisher?: TurnPublisher } = {}) {
    this.#nc = nc;
    this.#publisher = opts.publisher;
  }

  request(
    subject: string,
    payload: Uint8Array,
    headers: MsgHdrs | undefined,
    timeoutMs: number,
  ): Promise<RequestOutcome> {
    return this.#send(subject, payload, headers, timeoutMs) as Promise<RequestOutcome>;
  }

  /**
   * A request to a Herald service (or any responder answering JSON): resolves with the reply as
   * `schema` reads it, rejects with a HeraldError otherwise. An error reply (proto's ErrorReply)
   * is rebuilt with its code; no answer (nobody subscribes, the timeout, a send that failed, a
   * reply `schema` refuses, a peer answering `unavailable` or `internal`) is `unavailable`, with
   * `noAnswerAs`'s message and Retry-After when given. `body` is sent as is when it is bytes, as
   * its JSON otherwise. Read where the reply is settled, so it costs no promise more than
   * {@link request}.
   */
  requestJson<T>(
    subject: string,
    body: Uint8Array | object,
    schema: ReplySchema<T>,
    timeoutMs: number,
    noAnswerAs?: NoAnswer,
  ): Promise<Answer<T>> {
    let payload: Uint8Array;
    try {
      payload = body instanceof Uint8Array ? body : Buffer.from(JSON.stringify(body));
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#send(
      subject,
      payload,
      undefined,
      timeoutMs,
      undefined,
      schema,
      noAnswerAs,
    ) as Promise<Answer<T>>;
  }

  /**
   * A request every subscriber answers (a scatter-gather): `each` sees every answer as it comes and
   * returns true once it has all it waits for, which resolves the request with that last answer.
   * Resolves `timeout` when `timeoutMs` passes first (the answers seen so far were all handed to
   * `each`), `no_responders` when nobody subscribes.
   */
  gather(
    subject: string,
    payload: Uint8Array,
    timeoutMs: number,
    each: (msg: Msg) => boolean,
  ): Promise<RequestOutcome> {
    return this.#send(subject, payload, undefined, timeoutMs, each) as Promise<RequestOutcome>;
  }

  /**
   * Sends one request. Without `schema` it resolves with the outcome; with it, as
   * {@link requestJson} says (the reply is read in `settle`, no promise more).
   */
  #send(
    subject: string,
    payload: Uint8Array,
    headers: MsgHdrs | undefined,
    timeoutMs: number,
    each?: (msg: Msg) => boolean,
    schema?: ReplySchema<unknown>,
    noAnswerAs?: NoAnswer,
  ): Promise<unknown> {
    try {
      this.#sub ??= this.#nc.subscribe(`${this.#prefix}.*`, {
        callback: (err, msg) => {
          if (!err) this.#onReply(msg);
        },
      });
    } catch (err) {
      const outcome: RequestOutcome = { kind: 'error', reason: String(err) };
      return schema
        ? Promise.reject(noAnswer(subject, whyUnanswered(outcome, timeoutMs), noAnswerAs))
        : Promise.resolve(outcome);
    }
    const token = (this.#next++).toString(36);
    return new Promise<unknown>((resolve, reject) => {
      const settle = (outcome: RequestOutcome) => {
        const waiting = this.#waiting.get(token);
        if (!waiting) return;
        this.#waiting.delete(token);
        clearTimeout(waiting.timer);
        if (!schema) {
          resolve(outcome);
          return;
        }
        if (outcome.kind === 'reply') {
          settleWithReply(outcome.msg, subject, schema, noAnswerAs, resolve, reject);
        } else reject(noAnswer(subject, whyUnanswered(outcome, timeoutMs), noAnswerAs));
      };
      const timer = setTimeout(() => settle({ kind: 'timeout' }), timeoutMs);
      this.#waiting.set(token, { settle, timer, each });
      // A literal per case, not a spread: two objects fewer per request on the hot path.
      const reply = `${this.#prefix}.${token}`;
      const options = headers ? { reply, headers } : { reply };
      const failed = (err: unknown) => settle({ kind: 'error', reason: String(err) });
      if (this.#publisher) {
        this.#publisher.publish(subject, payload, options, failed);
        return;
      }
      try {
        this.#nc.publish(subject, payload, options);
      } catch (err) {
        failed(err);
      }
    });
  }

  #onReply(msg: Msg): void {
    const waiting = this.#waiting.get(msg.subject.slice(this.#prefix.length + 1));
    if (!waiting) return; // a second responder's answer, or one after the timeout
    // The server answers a request nobody subscribes to with an empty 503 status message.
    const noResponders = msg.data.length === 0 && msg.headers?.code === 503;
    if (noResponders) waiting.settle({ kind: 'no_responders' });
    else if (!waiting.each || waiting.each(msg)) waiting.settle({ kind: 'reply', msg });
  }
}
