import { HeraldError } from './errors.js';
import type { ErrorDetail } from './frames.js';
import { Listeners } from './listeners.js';
import type { HistoryOptions, HistoryPage } from './types.js';

/** Most events one history page returns, and most ids one `read` frame names (proto/inbox.ts). */
const MAX = 100;
const CURSOR = /^\d{1,20}$/;
const ID = /^.{1,64}$/s;
/** A request the edge refused as `rate_limited` (busy, or its per-socket rate) goes again after this. */
const RETRY_MS = 250;

/** A request and what answers it: a `history` frame, or (a read) the `inbox` count after it. */
type Pending = {
  frame: string;
  answer: 'history' | 'inbox';
  resolve: (result: HistoryPage | number) => void;
  reject: (e: Error) => void;
};

/**
 * One connection's inbox side (keys made with `--inbox-days`): the unread count the edge pushes,
 * read marks, and history pages. Answers carry no request id and the edge takes one request at a
 * time per socket, so requests go one at a time: a read is answered by the next count, a history
 * request by the next page, either by an error frame. The edge's counts after other devices'
 * changes come unasked and can be taken for a read's answer; a request sent too soon after is
 * refused `rate_limited` and sent again. Whatever waits when the socket goes is rejected.
 */
export class Inbox {
  readonly counts: Listeners<[number]>;
  /** The last count the edge sent; undefined until one came (a key without inbox mode). */
  unread: number | undefined;
  readonly #send: (frame: string) => boolean;
  readonly #queue: Pending[] = [];
  #waiting: Pending | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;

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
    return this.#ask({ type: 'history', before, limit }, 'history') as Promise<HistoryPage>;
  }

  /** A read mark; resolves to the count after it. TypeError for ids the edge would refuse. */
  read(ids: readonly string[] | true): Promise<number> {
    if (ids !== true && !(ids.length && ids.length <= MAX && ids.every((id) => ID.test(id))))
      return Promise.reject(new TypeError('Herald: markRead needs 1-100 event ids'));
    const frame = ids === true ? { type: 'read', all: true } : { type: 'read', ids };
    return this.#ask(frame, 'inbox') as Promise<number>;
  }

  /** The edge's count: a read's answer, or news from any device. */
  count(unread: number): void {
    this.unread = unread;
    this.counts.emit(unread);
    if (this.#waiting?.answer === 'inbox') this.#settle(unread);
  }

  /** A history page, or an error frame: the answer to the waiting request, if any. */
  answer(page: HistoryPage | ErrorDetail): boolean {
    const waiting = this.#waiting;
    if (!waiting || this.#retry) return false;
    if (!('code' in page)) {
      if (waiting.answer === 'history') this.#settle(page);
    } else if (page.code === 'rate_limited') {
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        this.#go(waiting);
      }, RETRY_MS);
    } else this.#settle(new HeraldError(page.code, page.message, page));
    return true;
  }

  /** The socket went: every request waiting or queued fails. */
  drop(): void {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const all = this.#waiting ? [this.#waiting, ...this.#queue] : [...this.#queue];
    this.#waiting = undefined;
    this.#queue.length = 0;
    for (const p of all) p.reject(notConnected());
  }

  #ask(frame: object, answer: Pending['answer']): Promise<HistoryPage | number> {
    return new Promise((resolve, reject) => {
      const p = { frame: JSON.stringify(frame), answer, resolve, reject };
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
    if (!this.#send(p.frame)) this.#settle(notConnected());
  }
}

const notConnected = () =>
  new HeraldError('not_connected', 'the socket is not open: retry once connected');
