import { type Logger, refillBucket, secondsUntilToken } from '@herald/kit';
import {
  type ErrorFrame,
  HeraldError,
  type HistoryFrame,
  HistoryRequestFrame,
  type InboxFrame,
  REQUEST_REF_FORMAT,
  ReadFrame,
} from '@herald/proto';
import { WebSocket } from 'ws';
import type { InboxClient } from './inbox-client.js';

/** The per-socket bounds on inbox requests (INBOX_REQUESTS_PER_S, INBOX_REQUEST_BURST). */
export interface InboxRequestLimits {
  /** Requests a socket may make per second once its burst is spent. */
  perSecond: number;
  /** Requests a socket may make at once (the bucket's size). */
  burst: number;
}

/**
 * The inbox side of one herald.v1 socket of an inbox key: the unread count on connect and after
 * every change (`{"type":"inbox","unread"}`), and the client's `read` and `history` requests,
 * answered in-band. A bad request gets an `error` frame naming the field and the socket stays
 * open. Work per socket is bounded: one request at the store at a time (the others wait their
 * turn, answered in order), and a token bucket of `burst` requests refilled at `perSecond`; past
 * it the request is refused with `rate_limited` (field `type`). A request's well-formed `ref` is
 * echoed on the frame that answers it (the count, the page or the refusal); notices carry none.
 */
export class InboxSocket {
  readonly #ws: WebSocket;
  readonly #client: InboxClient;
  readonly #account: string;
  readonly #recipient: string;
  readonly #limits: InboxRequestLimits;
  readonly #logger: Logger;
  #running = false;
  /** Requests admitted while one runs: answered in order, one at a time (at most `burst`). */
  #waiting: { ref: string | undefined; run: () => Promise<void> }[] = [];
  #tokens: number;
  #refilledAt = Date.now();
  /** Counts forwarded (notices, answers to reads): a connect's count read before one may be older. */
  #notices = 0;

  constructor(
    ws: WebSocket,
    deps: {
      client: InboxClient;
      account: string;
      recipient: string;
      limits: InboxRequestLimits;
      logger: Logger;
    },
  ) {
    this.#ws = ws;
    this.#client = deps.client;
    this.#account = deps.account;
    this.#recipient = deps.recipient;
    this.#limits = deps.limits;
    this.#logger = deps.logger;
    this.#tokens = deps.limits.burst;
  }

  /**
   * Sends the unread count the store holds now (on connect), unless a notice came while it was
   * read: that count may be from before the change the notice told (issue 43), and sent after it
   * would leave the badge wrong until the next change.
   */
  async greet(): Promise<void> {
    const notices = this.#notices;
    try {
      const unread = await this.#client.unread(this.#account, this.#recipient);
      if (this.#notices === notices) this.#send({ type: 'inbox', unread } satisfies InboxFrame);
    } catch (err) {
      this.#logger.warn({ err: String(err) }, 'inbox unread count not read on connect');
      this.#error(asHeraldError(err));
    }
  }

  /** Forwards a count: an unread notice (no ref), or the answer to the read that sent `ref`. */
  unread(unread: number, ref?: string): void {
    this.#notices++;
    this.#send({ type: 'inbox', unread, ...withRef(ref) } satisfies InboxFrame);
  }

  /**
   * Handles a client frame whose `type` is `read` or `history`; false for any other (the caller
   * counts it malformed).
   */
  handle(frame: Record<string, unknown>): boolean {
    if (frame.type !== 'read' && frame.type !== 'history') return false;
    const ref = refOf(frame);
    if (!this.#admit(ref)) return true;
    if (frame.ref !== undefined && ref === undefined) return this.#invalid('ref', REF_HINT);
    if (frame.type === 'read') {
      const parsed = ReadFrame.safeParse(frame);
      // A union names no path: the field at fault is `all` when given, else `ids`.
      if (!parsed.success) return this.#invalid('all' in frame ? 'all' : 'ids', READ_HINT, ref);
      const mark = 'all' in parsed.data ? { all: true as const } : { ids: parsed.data.ids };
      this.#run(ref, async () =>
        this.unread(await this.#client.read(this.#account, this.#recipient, mark), ref),
      );
      return true;
    }
    const parsed = HistoryRequestFrame.safeParse(frame);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return this.#invalid(String(issue?.path[0] ?? 'limit'), HISTORY_HINT, ref, issue?.message);
    }
    const { before, limit } = parsed.data;
    this.#run(ref, async () => {
      const page = await this.#client.history(this.#account, this.#recipient, before, limit);
      this.#send({
        type: 'history',
        events: page.events,
        next: page.next,
        ...withRef(ref),
      } satisfies HistoryFrame);
    });
    return true;
  }

  /** The token bucket, and the bound on requests waiting their turn. */
  #admit(ref: string | undefined): boolean {
    const now = Date.now();
    const { perSecond, burst } = this.#limits;
    const bucket = refillBucket({ tokens: this.#tokens, at: this.#refilledAt }, this.#limits, now);
    this.#tokens = bucket.tokens;
    this.#refilledAt = bucket.at;
    if (this.#tokens < 1 || this.#waiting.length >= burst) {
      this.#error(
        new HeraldError(
          'rate_limited',
          `at most ${burst} inbox requests at once, then ${perSecond} per second, per socket: slow down`,
          { field: 'type', retryAfter: secondsUntilToken(this.#tokens, perSecond) },
        ),
        ref,
      );
      return false;
    }
    this.#tokens -= 1;
    return true;
  }

  /** Runs requests one at a time, in the order they came. */
  #run(ref: string | undefined, run: () => Promise<void>): void {
    this.#waiting.push({ ref, run });
    if (!this.#running) void this.#drain();
  }

  async #drain(): Promise<void> {
    this.#running = true;
    for (let next = this.#waiting.shift(); next; next = this.#waiting.shift()) {
      // A closed socket's waiting requests would only cost the store.
      if (this.#ws.readyState !== WebSocket.OPEN) {
        this.#waiting = [];
        break;
      }
      try {
        await next.run();
      } catch (err) {
        this.#error(asHeraldError(err), next.ref);
      }
    }
    this.#running = false;
  }

  #invalid(field: string, hint: string, ref?: string, why = 'invalid value'): true {
    this.#error(new HeraldError('invalid_field', `${field}: ${why}; send ${hint}`, { field }), ref);
    return true;
  }

  #error(err: HeraldError, ref?: string): void {
    this.#send({ type: 'error', error: err.toBody().error, ...withRef(ref) } satisfies ErrorFrame);
  }

  #send(frame: InboxFrame | HistoryFrame | ErrorFrame): void {
    if (this.#ws.readyState === WebSocket.OPEN) this.#ws.send(JSON.stringify(frame));
  }
}

/** A `read` or `history` frame on a socket whose key keeps no inbox: `inbox_disabled`, in-band. */
export function refuseInboxFrame(ws: WebSocket, frame: Record<string, unknown>): boolean {
  if (frame.type !== 'read' && frame.type !== 'history') return false;
  const err = new HeraldError(
    'inbox_disabled',
    'this key keeps no inbox: read and history need a key created with --inbox-days',
    { field: 'type' },
  );
  const error = {
    type: 'error',
    error: err.toBody().error,
    ...withRef(refOf(frame)),
  } satisfies ErrorFrame;
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(error));
  return true;
}

/** The request's `ref` when it is well-formed (then echoed), else undefined. */
function refOf(frame: Record<string, unknown>): string | undefined {
  const { ref } = frame;
  return typeof ref === 'string' && REQUEST_REF_FORMAT.test(ref) ? ref : undefined;
}

function withRef(ref: string | undefined): { ref?: string } {
  return ref === undefined ? {} : { ref };
}

const READ_HINT =
  'ids (1 to 100 event ids) or all (true): {"type":"read","ids":["…"]} or {"type":"read","all":true}';
const REF_HINT = 'ref as 1 to 64 characters of A-Z, a-z, 0-9, _ and -, or no ref';
const HISTORY_HINT =
  'before (a `next` cursor, or null) and limit (1 to 100): {"type":"history","before":null,"limit":20}';

function asHeraldError(err: unknown): HeraldError {
  return err instanceof HeraldError
    ? err
    : new HeraldError('unavailable', 'The inbox could not be reached: ask again shortly');
}
