import { HeraldError, type HistoryPage, type Subscription } from '@herald/sdk';

/** What a tab asks of the user's inbox: a history page, or read marks (ids, or all). */
export type InboxOp =
  | { history: { before: string | null; limit: number } }
  | { read: readonly string[] | true };
export type InboxResult = HistoryPage | number;

type Ask = { ask: number; from: string; op: InboxOp };
type Answer = {
  re: number;
  to: string;
  result?: InboxResult;
  error?: { code: string; message: string };
};

/** A tab waits this long for the leader's answer (a leader tab closing mid-request never answers). */
export const RELAY_TIMEOUT_MS = 15_000;

/**
 * Only the leader tab holds the socket (leader.ts), so the inbox requests of the other tabs (the
 * bell opened in a follower, the notifications page) travel to it over a BroadcastChannel and
 * its answer comes back the same way. The leader runs its own directly.
 */
export class InboxRelay {
  readonly #channel: BroadcastChannel | undefined;
  readonly #me = Math.random().toString(36).slice(2);
  readonly #waiting = new Map<number, (answer: Answer) => void>();
  #seq = 0;
  #serving: Subscription | undefined;

  constructor(name: string) {
    if (typeof BroadcastChannel !== 'function') return;
    this.#channel = new BroadcastChannel(name);
    this.#channel.onmessage = (ev: MessageEvent<Ask | Answer>) => this.#onMessage(ev.data);
  }

  /** The leader's subscription, which answers every tab; undefined when this tab stops leading. */
  serve(sub: Subscription | undefined): void {
    this.#serving = sub;
  }

  run(op: InboxOp): Promise<InboxResult> {
    if (this.#serving) return runOp(this.#serving, op);
    const channel = this.#channel;
    if (!channel) return Promise.reject(notConnected());
    const ask = ++this.#seq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle({ re: ask, to: this.#me }), RELAY_TIMEOUT_MS);
      const settle = (a: Answer) => {
        clearTimeout(timer);
        this.#waiting.delete(ask);
        if (a.result !== undefined) resolve(a.result);
        else reject(a.error ? new HeraldError(a.error.code, a.error.message) : notConnected());
      };
      this.#waiting.set(ask, settle);
      channel.postMessage({ ask, from: this.#me, op } satisfies Ask);
    });
  }

  close(): void {
    this.#channel?.close();
    for (const settle of [...this.#waiting.values()]) settle({ re: 0, to: this.#me });
  }

  #onMessage(m: Ask | Answer): void {
    if ('ask' in m) {
      const sub = this.#serving;
      if (!sub) return;
      const reply = (a: Omit<Answer, 're' | 'to'>) =>
        this.#channel?.postMessage({ re: m.ask, to: m.from, ...a } satisfies Answer);
      runOp(sub, m.op).then(
        (result) => reply({ result }),
        (err: HeraldError) => reply({ error: { code: err.code ?? 'error', message: err.message } }),
      );
    } else if (m.to === this.#me) this.#waiting.get(m.re)?.(m);
  }
}

async function runOp(sub: Subscription, op: InboxOp): Promise<InboxResult> {
  if ('history' in op) return sub.history(op.history);
  return op.read === true ? sub.markAllRead() : sub.markRead(op.read);
}

const notConnected = () =>
  new HeraldError(
    'not_connected',
    'no tab of this browser holds an open socket: retry once connected',
  );
