import { randomUUID } from 'node:crypto';
import type { Logger } from '@herald/kit';
import type { Kysely } from 'kysely';
import type { PushSubscriptionRow, StatusDb } from '../db-schema.js';
import { type ClaimedGroup, claimGroups, nextDue } from './claim.js';
import { alreadySent, type GroupResult, recordGroup, releaseGroup } from './completion.js';
import { buildMessage, collapseKey } from './message.js';
import type { PushMetrics, PushResult } from './metrics.js';
import { classifyFor, foldVerdicts, type Verdict } from './outcome.js';
import { type AccountCredentials, alarmText, PushProviders } from './providers.js';
import type { SendResult } from './send.js';
import { Slots } from './slots.js';

export interface PushSenderOptions {
  concurrency: number;
  claimBatch: number;
  timeoutMs: number;
  pollMs: number;
  coalesceMs: number;
  schedule: readonly number[];
  drainMs: number;
}

export interface PushSenderDeps {
  db: Kysely<StatusDb>;
  logger: Logger;
  metrics: PushMetrics;
  providers: PushProviders;
}

/** Wait after a failed claim or record before trying again, ms. */
const DB_RETRY_MS = 1000;
/** Subscriptions read per recipient at most (the cap is 1000). */
const SUBSCRIPTIONS_READ_MAX = 1000;

/**
 * Sends due pushes: a timer armed for the earliest due time the writer reports (plus the
 * coalescing wait), and a poll as a safety net, start rounds; a round claims whole recipients
 * (leased, so no other instance sends them), sends one push per subscription of each (at most
 * `concurrency` requests in flight) and records each recipient's results in one transaction.
 */
export class PushSender {
  readonly #deps: PushSenderDeps;
  readonly #opts: PushSenderOptions;
  readonly #worker = randomUUID();
  readonly #slots: Slots;
  readonly #abort = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #poll: NodeJS.Timeout | undefined;
  #round: Promise<void> | undefined;
  #again = false;
  /** Groups being sent, and how many due rows they hold (a claim takes at most the rest). */
  readonly #inflight = new Set<Promise<void>>();
  #held = 0;
  #stopping = false;

  constructor(deps: PushSenderDeps, opts: PushSenderOptions) {
    this.#deps = deps;
    this.#opts = opts;
    this.#slots = new Slots(Math.max(1, opts.concurrency));
  }

  start(): void {
    if (this.#opts.concurrency === 0 || this.#poll) return;
    this.#poll = setInterval(() => this.kick(), this.#opts.pollMs);
    // What a restart left: armed for the earliest waiting row.
    nextDue(this.#deps.db).then(
      (at) => at && this.due(at),
      () => {},
    );
  }

  /** A push falls due at `at`: its recipient is claimed coalesceMs later. */
  due(at: Date): void {
    if (this.#stopping || this.#opts.concurrency === 0) return;
    const when = at.getTime() + this.#opts.coalesceMs;
    if (when >= this.#timerAt) return;
    clearTimeout(this.#timer);
    this.#timerAt = when;
    this.#timer = setTimeout(
      () => {
        this.#timerAt = Number.POSITIVE_INFINITY;
        this.kick();
      },
      Math.max(0, when - Date.now()),
    );
  }

  /** Starts a round now, or another right after the one running. */
  kick(): void {
    if (this.#stopping) return;
    if (this.#round) {
      this.#again = true;
      return;
    }
    this.#round = this.#run().finally(() => {
      this.#round = undefined;
      if (this.#again && !this.#stopping) {
        this.#again = false;
        this.kick();
      }
    });
  }

  /**
   * Stops claiming; lets the pushes in flight finish for up to drainMs, then aborts the rest
   * (their rows are released: due again at once for another instance).
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#poll);
    clearTimeout(this.#timer);
    await this.#round;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((r) => {
      timer = setTimeout(r, this.#opts.drainMs);
    });
    await Promise.race([Promise.all(this.#inflight), bound]);
    clearTimeout(timer);
    this.#abort.abort();
    await Promise.all(this.#inflight);
    this.#deps.providers.close();
  }

  async #run(): Promise<void> {
    const { db, logger } = this.#deps;
    let groups: ClaimedGroup[];
    const max = this.#opts.claimBatch - this.#held;
    if (max <= 0) return;
    try {
      groups = await claimGroups(db, {
        worker: this.#worker,
        max,
        leaseMs: this.#lease(),
        coalesceMs: this.#opts.coalesceMs,
      });
    } catch (err) {
      logger.warn({ err: String(err) }, 'push claim failed: retrying');
      setTimeout(() => this.kick(), DB_RETRY_MS).unref();
      return;
    }
    if (groups.length === 0) return;
    // Sent without waiting for each other: a slow push service holds its own slots, not the claim.
    const leaseEnds = Date.now() + this.#lease();
    for (const g of groups) {
      this.#held += g.events.length;
      const p: Promise<void> = this.#group(g, leaseEnds).finally(() => {
        this.#inflight.delete(p);
        this.#held -= g.events.length;
        // A full claim may have left more due; room was made for it.
        this.kick();
      });
      this.#inflight.add(p);
    }
  }

  #lease(): number {
    return 3 * this.#opts.timeoutMs + 1000;
  }

  async #group(g: ClaimedGroup, leaseEnds: number): Promise<void> {
    const { db, logger } = this.#deps;
    const ids = g.events.map((e) => e.id);
    try {
      if (this.#stopping) {
        await releaseGroup(db, this.#worker, ids);
        return;
      }
      const result = await this.#sendGroup(g, leaseEnds);
      await recordGroup(db, this.#worker, result);
    } catch (err) {
      // Unrecorded: the lease runs out and another round sends what no push_sent row records.
      logger.warn(
        { err: String(err), account: g.account, events: ids.length },
        'push results not recorded',
      );
    }
  }

  async #sendGroup(g: ClaimedGroup, leaseEnds: number): Promise<GroupResult> {
    const { db, metrics, logger } = this.#deps;
    const now = Date.now();
    const all = g.events.map((e) => e.id);
    const live = g.events.filter((e) => e.expiresAt.getTime() > now);
    const done = (result: PushResult, n: number, provider = 'webpush'): GroupResult => {
      if (n > 0) metrics.messages.inc({ provider, result }, n);
      return { delivered: [], gone: [], retry: undefined, events: all };
    };
    if (live.length < g.events.length)
      metrics.messages.inc(
        { provider: 'webpush', result: 'expired' },
        g.events.length - live.length,
      );
    if (live.length === 0) return done('expired', 0);
    const found = await db
      .selectFrom('push_subscriptions')
      .selectAll()
      .where('account_id', '=', g.account)
      .where('recipient', '=', g.recipient)
      .limit(SUBSCRIPTIONS_READ_MAX)
      .execute();
    if (found.length === 0) return done('no_subscription', live.length);
    const creds = await this.#deps.providers.credentials(g.account);
    const subs = found.filter((s) => PushProviders.configured(creds, s.kind));
    const missing = [...new Set(found.filter((s) => !subs.includes(s)).map((s) => s.kind))];
    for (const kind of missing) {
      metrics.messages.inc({ provider: kind, result: 'unconfigured' }, live.length);
      logger.error(
        { account: g.account, provider: kind, events: live.length },
        `push not sent to the recipient's ${kind} subscriptions: the account has no ${kind} credentials that open under this WEBHOOK_SECRET_KEY (configuration alarm: run \`push configure\`)`,
      );
    }
    if (subs.length === 0) return done('unconfigured', 0);
    const liveIds = live.map((e) => e.id);
    const sent = await alreadySent(
      db,
      liveIds,
      subs.map((s) => s.id),
    );
    const tag = collapseKey(g.account, g.recipient);
    const newest = Math.max(...live.map((e) => e.dueAt.getTime()));
    if (g.attempts === 1) metrics.lateness.observe(Math.max(0, now - newest) / 1000);
    const verdicts = await Promise.all(
      subs.map(async (s) => {
        const owed = live.filter((e) => !sent.has(`${e.id}\u0000${s.id}`));
        if (owed.length === 0) return undefined;
        const v = await this.#sendOne(s, creds, owed, tag, g.account, leaseEnds);
        return { sub: s.id, kind: s.kind, owed, v };
      }),
    );
    const result = foldVerdicts(verdicts, all, live, g.attempts, this.#opts.schedule, now);
    if (result.exhausted > 0) {
      // Counted under the provider that kept answering "later" (the first, when several did).
      const provider = verdicts.find((x) => x?.v.kind === 'retry')?.kind ?? 'webpush';
      metrics.messages.inc({ provider, result: 'exhausted' }, result.exhausted);
      logger.warn(
        { account: g.account, events: result.exhausted, attempts: g.attempts },
        'push given up: the retry schedule or the TTL ran out',
      );
    }
    return result;
  }

  /** One push to one subscription; a Web Push 413 is answered once more without the payload. */
  async #sendOne(
    s: PushSubscriptionRow,
    creds: AccountCredentials,
    owed: ClaimedGroup['events'],
    tag: string,
    account: string,
    leaseEnds: number,
  ): Promise<Verdict> {
    const { metrics, logger } = this.#deps;
    const newest = owed.reduce((a, b) => (b.at > a.at ? b : a));
    const ttl = Math.max(1, Math.floor((newest.expiresAt.getTime() - Date.now()) / 1000));
    let msg = buildMessage(owed, tag);
    let res: SendResult | undefined;
    let verdict: Verdict | undefined;
    for (let thinned = false; ; thinned = true) {
      const sent = await this.#slots.run(async () =>
        // Waited so long for a slot that the lease could run out mid-request: another instance
        // may claim the rows then, so this one does not send (the rows come back due at once).
        Date.now() + this.#opts.timeoutMs >= leaseEnds || this.#abort.signal.aborted
          ? undefined
          : this.#deps.providers.send(
              account,
              s,
              creds,
              msg,
              newest.spec.include_payload === true,
              ttl,
              this.#abort.signal,
            ),
      );
      // Not started, or cut short by shutdown: due again at once, for any instance.
      if (!sent || (sent.status === null && this.#abort.signal.aborted))
        return { kind: 'retry', result: 'retry', retryAfter: '0' };
      res = sent;
      metrics.latency.observe(res.latencyMs / 1000);
      verdict = classifyFor(s.kind, res);
      if (verdict.kind !== 'too_large' || thinned) break;
      const { payload: _p, body: _b, ...rest } = msg;
      msg = rest;
    }
    metrics.messages.inc({ provider: s.kind, result: verdict.result });
    if (verdict.kind === 'rejected' && verdict.alarm) {
      logger.error(
        { account, subscription: s.id, http_status: res.status, error: res.error },
        alarmText(s.kind),
      );
    } else if (verdict.kind === 'rejected' || verdict.kind === 'too_large') {
      logger.warn(
        { account, subscription: s.id, http_status: res.status, error: res.error },
        'push given up',
      );
    }
    return verdict;
  }
}
