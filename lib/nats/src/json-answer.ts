import { ErrorReply, errorOfReply, HeraldError } from '@herald/proto';
import type { Msg } from 'nats';

/** What a reply is checked against: a zod schema, or anything with a `safeParse` of that shape. */
export interface ReplySchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false };
}

/** What a reply schema answers, its error variant (`ok: false`, proto's ErrorReply) left out. */
export type Answer<T> = Exclude<T, { ok: false }>;

/**
 * What a caller tells its own caller when no answer comes: the `unavailable` HeraldError's
 * message (shown to whoever asked, so it says what to do) and its Retry-After, seconds.
 */
export interface NoAnswer {
  message: string;
  retryAfter?: number;
}

/** Why a request ended without an answer: nats-requester.ts's outcomes other than a reply. */
export type Unanswered =
  | { kind: 'no_responders' }
  | { kind: 'timeout' }
  | { kind: 'error'; reason: string };

/**
 * "No answer", the one meaning of it in Herald: HeraldError `unavailable` (503), whether nobody
 * subscribes, nobody answered in time, the request could not be sent, the reply was not one, or
 * the peer answered that it could not answer. `why` (for the log) becomes its `cause`; the
 * message is the caller's when it gives one, else it names the subject and why.
 */
export function noAnswer(subject: string, why: string | Error, opts?: NoAnswer): HeraldError {
  return new HeraldError(
    'unavailable',
    opts?.message ?? `no answer on ${subject}: ${String(why)}`,
    {
      retryAfter: opts?.retryAfter,
      cause: why,
    },
  );
}

/** Why a request went unanswered, in words, for a no-answer error's cause. */
export function whyUnanswered(outcome: Unanswered, timeoutMs: number): string {
  if (outcome.kind === 'no_responders') return 'nobody subscribes';
  if (outcome.kind === 'timeout') return `no reply within ${timeoutMs} ms`;
  return `not sent: ${outcome.reason}`;
}

/** One decoder for every reply (it keeps no state between non-streaming decodes). */
const utf8 = new TextDecoder();

/** JSON of a reply's body, or undefined when it is not JSON. */
export function replyJson(msg: Msg): unknown {
  try {
    return JSON.parse(utf8.decode(msg.data));
  } catch {
    return undefined;
  }
}

/**
 * Settles a request with its reply: resolves with the reply as `schema` reads it, or rejects with
 * the HeraldError the caller gets instead. An error reply keeps its code, message and field (STYLE
 * practice 6), except the peer's `unavailable` and `internal`: a peer that could not answer is no
 * answer, with its own words kept as the cause. (Settling here, not returning a value to tell
 * apart, spares every answered request an `instanceof`.)
 */
export function settleWithReply<T>(
  msg: Msg,
  subject: string,
  schema: ReplySchema<T>,
  opts: NoAnswer | undefined,
  resolve: (answer: Answer<T>) => void,
  reject: (err: HeraldError) => void,
): void {
  const value = replyJson(msg);
  if ((value as { ok?: unknown } | undefined)?.ok === false) {
    const reply = ErrorReply.safeParse(value);
    if (!reply.success) {
      reject(noAnswer(subject, 'an error reply that is not an ErrorReply', opts));
      return;
    }
    const error = errorOfReply(reply.data);
    reject(
      error.code === 'unavailable' || error.code === 'internal'
        ? noAnswer(subject, error, opts)
        : error,
    );
    return;
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) resolve(parsed.data as Answer<T>);
  else reject(noAnswer(subject, 'a reply its schema refuses', opts));
}
