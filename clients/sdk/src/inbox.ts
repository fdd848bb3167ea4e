import { HeraldError } from './errors.js';
import type { ErrorDetail } from './frames.js';
import { Listeners } from './listeners.js';
import type { HistoryOptions, HistoryPage } from './types.js';

/** Most events one history page returns, and most ids one `read` frame names (proto/inbox.ts). */
const MAX = 100;
const CURSOR = /^\d{1,20}$/;
const ID = /^.{1,64}$/s;

/** A request and its `ref`, which the edge echoes on the frame that answers it. */
type Pending = {
  frame: object;
  ref: string;
  resolve: (result: HistoryPage | number) => void;
  reject: (e: Error) => void;
};

/**
 * One connection's inbox side (keys made with `--inbox-days`): the unread count the edge pushes,
 * read marks, and history pages. Each request carries a `ref` (a counter) and is settled by the
 * frame that echoes it: a read by its `inbox` count, a history request by its page, either by an
 * error frame; counts without a ref are other devices' news. Requests go one at a time, in call
 * order, as the edge answers them. Whatever waits when the socket goes is rejected.
 */
export class Inbox {
  readonly counts: Listeners<[number]>;
  /** The last count the edge sent; undefined until one came (a key without inbox mode). */
  unread: number | undefined;
  readonly #send: (frame: string) => boolean;
  readonly #queue: Pending[] = [];
  #waiting: Pending | undefined;
  #refs = 0;

  constructor(send: (frame: string) => boolean, onThrow: (err: unknown) => void) {
    this.#send = send;
    this.counts = new Listeners(onThrow);
  }

  /** Rejects with a TypeError for a cursor or limit the edge would refuse. */
  history({ before = null, limit = 20 }: HistoryOptions = {}): Promise<HistoryPage> {
    if (
      !(before === null || CURSOR.test(before)) ||
      !(limit >= 1 && limit <= MAX && limit % 1 === 0)
    )
      return Promise.reject(
        new TypeError('Herald: history needs before: a next or null, limit: 1-100'),
      );
    return this.#ask({ type: 'history', before, limit }) as Promise<HistoryPage>;
  }

  /** A read mark; resolves to the count after it. TypeError for ids the edge would refuse. */
  read(ids: readonly string[] | true): Promise<number> {
    if (ids !== true && !(ids.length && ids.length <= MAX && ids.every((id) => ID.test(id))))
      return Promise.reject(new TypeError('Herald: markRead needs 1-100 event ids'));
    const frame = ids === true ? { type: 'read', all: true } : { type: 'read', ids };
    return this.#ask(frame) as Promise<number>;
  }

  /** The edge's count: the answer to the read that sent `ref`, or news from any device. */
  count(unread: number, ref: string | undefined): void {
    this.unread = unread;
    this.counts.emit(unread);
    this.answer(unread, ref);
  }

  /**
   * A count, page or error frame that echoes a request's `ref`: that request's answer. False
   * for a frame without one (an error then is a refusal before a close).
   */
  answer(result: HistoryPage | number | ErrorDetail, ref: string | undefined): boolean {
    if (ref === undefined) return false;
    if (ref === this.#waiting?.ref)
      this.#settle(
        typeof result === 'object' && 'code' in result
          ? new HeraldError(result.code, result.message, result)
          : result,
      );
    return true;
  }

  /** The socket went: every request waiting or queued fails. */
  drop(): void {
    const all = this.#waiting ? [this.#waiting, ...this.#queue] : [...this.#queue];
    this.#waiting = undefined;
    this.#queue.length = 0;
    for (const p of all) p.reject(notConnected());
  }

  #ask(frame: object): Promise<HistoryPage | number> {
    return new Promise((resolve, reject) => {
      const p = { frame, ref: `r${++this.#refs}`, resolve, reject };
      if (this.#waiting) this.#queue.push(p);
      else this.#go(p);
    });
  }

  #settle(result: HistoryPage | number | Error): void {
    const p = this.#waiting;
    this.#waiting = undefined;
    if (result instanceof Error) p?.reject(result);
    else p?.resolve(result);
    const next = this.#queue.shift();
    if (next) this.#go(next);
  }

  #go(p: Pending): void {
    this.#waiting = p;
    if (!this.#send(JSON.stringify({ ...p.frame, ref: p.ref }))) this.#settle(notConnected());
  }
}

const notConnected = () =>
  new HeraldError('not_connected', 'the socket is not open: retry once connected');
