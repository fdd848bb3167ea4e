import { HeraldError } from './errors.js';
import type { ErrorDetail } from './frames.js';
import { Listeners } from './listeners.js';
import type { HistoryOptions, HistoryPage } from './types.js';

/** Most events one history page returns, and most ids one `read` frame names (proto/inbox.ts). */
const MAX = 100;
const CURSOR = /^\d{1,20}$/;
const ID = /^.{1,64}$/s;

type Pending = { frame: string; resolve: (page: HistoryPage) => void; reject: (e: Error) => void };

/**
 * One connection's inbox side (keys made with `--inbox-days`): the unread count the edge pushes,
 * read marks, and history pages. A `history` answer carries no request id, so requests go one at
 * a time per socket; an error frame while one waits is its answer. Whatever waits when the socket
 * goes is rejected.
 */
export class Inbox {
  readonly counts: Listeners<[number]>;
  /** The last count the edge sent; undefined until one came (a key without inbox mode). */
  unread: number | undefined;
  readonly #send: (frame: string) => boolean;
  readonly #queue: Pending[] = [];
  #waiting: Pending | undefined;

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
    return new Promise((resolve, reject) => {
      this.#queue.push({
        frame: JSON.stringify({ type: 'history', before, limit }),
        resolve,
        reject,
      });
      if (!this.#waiting) this.#next();
    });
  }

  /**
   * Sends a read mark; false when the socket is not open or the key has no inbox. Throws a
   * TypeError for ids the edge would refuse (1 to 100 ids of 1 to 64 characters).
   */
  read(ids: readonly string[] | true): boolean {
    if (ids !== true && !(ids.length && ids.length <= MAX && ids.every((id) => ID.test(id))))
      throw new TypeError('Herald: markRead needs 1-100 event ids');
    const frame = ids === true ? { type: 'read', all: true } : { type: 'read', ids };
    return this.unread !== undefined && this.#send(JSON.stringify(frame));
  }

  /** The edge's count. */
  count(unread: number): void {
    this.unread = unread;
    this.counts.emit(unread);
  }

  /** A history page, or an error frame: the answer to the waiting request, if any. */
  answer(page: HistoryPage | ErrorDetail): boolean {
    const waiting = this.#waiting;
    if (!waiting) return false;
    this.#waiting = undefined;
    if ('code' in page) waiting.reject(new HeraldError(page.code, page.message, page));
    else waiting.resolve(page);
    this.#next();
    return true;
  }

  /** The socket went: every request waiting or queued fails. */
  drop(): void {
    const all = this.#waiting ? [this.#waiting, ...this.#queue] : [...this.#queue];
    this.#waiting = undefined;
    this.#queue.length = 0;
    for (const p of all) p.reject(notConnected());
  }

  #next(): void {
    const p = this.#queue.shift();
    if (!p) return;
    if (this.#send(p.frame)) this.#waiting = p;
    else {
      p.reject(notConnected());
      this.#next();
    }
  }
}

const notConnected = () =>
  new HeraldError('not_connected', 'the socket is not open: retry once connected');
