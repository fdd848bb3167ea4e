import { subjects } from '@herald/proto';
import type { NatsConnection } from 'nats';
import type { Poster } from '../load/http-poster.js';
import type { DeliveryLedger, Door } from './ledger.js';

export interface Key {
  account: string;
  apiKey: string;
}

export interface LoadOptions {
  http: Poster;
  nc: NatsConnection;
  ledger: DeliveryLedger;
  /** Events per second, every kind together (a batch counts its events). */
  rate: number;
  main: Key;
  inbox: Key;
  /** The key with the push fallback: its recipients' events are pushed when no socket proves them. */
  push: Key;
  /** Recipients with a device held connected: their events go live (queued while it is away). */
  connected: readonly string[];
  /** Recipients whose device only visits now and then: their events are queued. */
  away: readonly string[];
  /** Recipients of the inbox key, their devices held connected. */
  inboxRecipients: readonly string[];
  /** Recipients of the push key, subscribed to Web Push, their devices visiting now and then. */
  pushRecipients: readonly string[];
}

type Op = 'live' | 'queued' | 'batch' | 'nats' | 'inbox' | 'push';
/** The mix, by weight (of requests; a batch carries BATCH_EVENTS events). */
const MIX: Array<[Op, number]> = [
  ['live', 35],
  ['queued', 15],
  ['batch', 10],
  ['nats', 25],
  ['inbox', 15],
  ['push', 10],
];
const BATCH_EVENTS = 5;
/** Requests in flight at most: a stalled stack slows the load rather than piling it up. */
const MAX_IN_FLIGHT = 64;
const TICK_MS = 100;
const NATS_TIMEOUT_MS = 10_000;

interface Answer {
  http_status?: number;
  id?: string;
  results?: Array<{ http_status: number; id?: string }>;
}

const costOf = (op: Op) => (op === 'batch' ? BATCH_EVENTS : 1);

function pickOp(): Op {
  let r = Math.random() * MIX.reduce((a, [, w]) => a + w, 0);
  for (const [op, w] of MIX) {
    r -= w;
    if (r < 0) return op;
  }
  return 'live';
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

/**
 * The steady mixed load, open-loop at `rate` events/s: live and queued `POST /notify`,
 * `POST /notify/batch` of live and queued recipients together, `rt.dispatch` over NATS, the
 * inbox key's events and the push key's (mostly pushed: their devices are away). Every 200/202 goes in the ledger by id with its recipient; every other
 * answer is counted by status, and a request with no answer as failed.
 */
export class Load {
  readonly #o: LoadOptions;
  #timer: NodeJS.Timeout | undefined;
  #budget = 0;
  #next: Op = 'live';
  #inFlight = new Set<Promise<void>>();
  /** Requests not sent because MAX_IN_FLIGHT were waiting. */
  skipped = 0;

  constructor(o: LoadOptions) {
    this.#o = o;
  }

  start(): void {
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
  }

  /** Stops sending; resolves once every request in flight has its answer. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  #tick(): void {
    // At most a second's worth saved up (a batch's worth at a rate below it).
    const cap = Math.max(this.#o.rate, BATCH_EVENTS);
    this.#budget = Math.min(this.#budget + (this.#o.rate * TICK_MS) / 1000, cap);
    // The op drawn waits for its budget (a batch for five events'), so the mix holds at any rate.
    for (let cost = costOf(this.#next); this.#budget >= cost; cost = costOf(this.#next)) {
      const op = this.#next;
      this.#next = pickOp();
      this.#budget -= cost;
      if (this.#inFlight.size >= MAX_IN_FLIGHT) {
        this.skipped++;
        continue;
      }
      const p = this.#send(op).catch(() => this.#o.ledger.fail());
      this.#inFlight.add(p);
      void p.finally(() => this.#inFlight.delete(p));
    }
  }

  async #send(op: Op): Promise<void> {
    const o = this.#o;
    const payload = { soak: op, at: Date.now() };
    if (op === 'batch') {
      const to = [
        pick(o.connected),
        pick(o.connected),
        pick(o.connected),
        pick(o.away),
        pick(o.away),
      ];
      const body = {
        api_key: o.main.apiKey,
        client: 'mobile',
        events: to.map((recipient) => ({ recipient, payload })),
      };
      const res = await o.http.post('/notify/batch', JSON.stringify(body));
      if (res.status !== 200) return o.ledger.refuse(res.status);
      const answer = JSON.parse(res.text) as Answer;
      for (const [i, r] of (answer.results ?? []).entries())
        this.#record(r, to[i] as string, 'batch');
      return;
    }
    const key = op === 'inbox' ? o.inbox : op === 'push' ? o.push : o.main;
    const recipients = {
      live: o.connected,
      nats: o.connected,
      queued: o.away,
      inbox: o.inboxRecipients,
      push: o.pushRecipients,
    }[op];
    const recipient = pick(recipients);
    const body = JSON.stringify({ recipient, payload, api_key: key.apiKey, client: 'mobile' });
    if (op === 'nats') {
      const msg = await o.nc.request(subjects.dispatch(key.account), body, {
        timeout: NATS_TIMEOUT_MS,
      });
      return this.#record(JSON.parse(msg.string()) as Answer, recipient, 'nats');
    }
    const res = await o.http.post('/notify', body);
    if (res.status !== 200 && res.status !== 202) return o.ledger.refuse(res.status);
    this.#record(
      { ...(JSON.parse(res.text) as Answer), http_status: res.status },
      recipient,
      'notify',
    );
  }

  #record(a: Answer, recipient: string, door: Door): void {
    const status = a.http_status ?? 0;
    if ((status === 200 || status === 202) && a.id) this.#o.ledger.accept(a.id, recipient, door);
    else this.#o.ledger.refuse(status);
  }
}
