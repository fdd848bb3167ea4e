import { randomUUID } from 'node:crypto';
import type { Logger, SecretBox } from '@herald/kit';
import { type OutboundClient, OutboundError } from '@herald/outbound';
import type { Kysely } from 'kysely';
import type { StatusDb } from '../db-schema.js';
import { type ClaimedMessage, claimDue } from './claim.js';
import {
  type AttemptRecord,
  type Completed,
  type Outcome,
  recordCompleted,
  trimAttempts,
} from './completion.js';
import { HeldMessages } from './held.js';
import type { AttemptResult, WebhookMetrics } from './metrics.js';
import { nextWait, parseRetryAfter } from './retry.js';
import { signingKeys } from './secrets.js';
import { signedHeaders } from './signing.js';

export interface SenderOptions {
  /** WEBHOOK_CONCURRENCY: requests in flight from this instance. */
  concurrency: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY: requests in flight per endpoint, every instance's counted. */
  perEndpoint: number;
  /** WEBHOOK_ENDPOINT_PREFETCH: leases held per endpoint that is not failing. */
  prefetch: number;
  /** WEBHOOK_CLAIM_BATCH: messages held claimed and unsent, over every endpoint. */
  claimBatch: number;
  timeoutMs: number;
  /** WEBHOOK_RETRY_SCHEDULE, ms. */
  schedule: readonly number[];
  disableAfterMs: number;
  attemptsKept: number;
  pollMs: number;
  drainMs: number;
}

export interface SenderDeps {
  db: Kysely<StatusDb>;
  logger: Logger;
  metrics: WebhookMetrics;
  box: SecretBox | undefined;
  client: OutboundClient;
}

/** Results recorded in one transaction at most. */
const COMPLETION_BATCH = 500;
/** Wait after a failed claim or completion before trying again, ms. */
const DB_RETRY_MS = 1000;
/** Results gathered this long before a transaction records them (one per round, not per result). */
const RECORD_GATHER_MS = 20;
/** How often the attempts log of the endpoints attempted meanwhile is trimmed, ms. */
const TRIM_EVERY_MS = 10_000;
/**
 * A claim lasts three times the request's timeout and a second: held unsent for at most the
 * timeout (then released), the request's own time, then as long again to record its result. A
 * crashed worker's claims are due again when it ends.
 */
export const leaseMs = (timeoutMs: number): number => 3 * timeoutMs + 1000;

/**
 * Sends the outbox: claims due messages ahead of its requests (a lease; an endpoint is served by
 * one instance at a time while it holds leases of it), signs and POSTs each, at most perEndpoint
 * in flight per endpoint and concurrency in all, and records the results in batches (one
 * transaction for whatever finished within RECORD_GATHER_MS, or while the previous one was
 * written). It claims when told messages were queued, when results were recorded, and every
 * pollMs.
 */
export class WebhookSender {
  readonly #deps: SenderDeps;
  readonly #opts: SenderOptions;
  readonly #inflight = new Set<Promise<void>>();
  readonly #held = new HeldMessages();
  readonly #worker = randomUUID();
  /** Endpoints attempted since the attempts log was last trimmed. */
  readonly #attempted = new Set<string>();
  #trimmedAt = Date.now();
  readonly #abort = new AbortController();
  #done: Completed[] = [];
  #recording: Promise<void> | undefined;
  #stopping = false;
  #loop: Promise<void> | undefined;
  #woken = false;
  #wake: (() => void) | undefined;

  constructor(deps: SenderDeps, opts: SenderOptions) {
    this.#deps = deps;
    this.#opts = opts;
  }

  start(): void {
    if (this.#opts.concurrency > 0) this.#loop ??= this.#run();
  }

  /** Look for due messages now (some were queued, or a slot freed). */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /**
   * Stops claiming, lets requests in flight finish for up to drainMs, then aborts the rest (they
   * are released, due again at once for another instance) and records every result.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.wake();
    await this.#loop;
    for (const m of this.#held.takeAll()) this.#complete(m, { kind: 'release' });
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((r) => {
      timer = setTimeout(r, this.#opts.drainMs);
    });
    await Promise.race([Promise.all(this.#inflight), bound]);
    clearTimeout(timer);
    this.#abort.abort();
    await Promise.all(this.#inflight);
    await this.#recording;
    this.#deps.client.close();
  }

  async #run(): Promise<void> {
    const { db, logger } = this.#deps;
    const { claimBatch, perEndpoint, prefetch, timeoutMs } = this.#opts;
    const lease = leaseMs(timeoutMs);
    while (!this.#stopping) {
      this.#woken = false;
      const max = claimBatch - this.#held.size;
      try {
        const claimed = await claimDue(db, {
          worker: this.#worker,
          max,
          perEndpoint,
          prefetch,
          leaseMs: lease,
        });
        const releaseAt = Date.now() + timeoutMs;
        for (const m of claimed) this.#held.add(m, releaseAt);
      } catch (err) {
        logger.warn({ err: String(err) }, 'webhook claim failed: retrying');
        await this.#sleep(DB_RETRY_MS);
        continue;
      }
      this.#held.sweep(Date.now(), this.#release);
      this.#dispatch();
      if (!this.#woken) await this.#sleep(this.#opts.pollMs);
    }
  }

  /** Starts held messages while this instance and their endpoints have room. */
  #dispatch(): void {
    while (!this.#stopping && this.#inflight.size < this.#opts.concurrency) {
      const m = this.#held.next(this.#opts.perEndpoint, Date.now(), this.#release);
      if (!m) return;
      const p: Promise<void> = this.#send(m).finally(() => {
        this.#inflight.delete(p);
        this.#held.finished(m.endpoint_id);
        this.#dispatch();
      });
      this.#inflight.add(p);
    }
  }

  /** Held too long to start within its lease: due again at once, for any sender. */
  readonly #release = (m: ClaimedMessage): void => {
    this.#complete(m, { kind: 'release' });
  };

  #sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    }).then(() => {
      this.#wake = undefined;
    });
  }

  async #send(m: ClaimedMessage): Promise<void> {
    const { metrics } = this.#deps;
    const started = Date.now();
    if (m.attempts === 1)
      metrics.lag.observe(Math.max(0, started - m.transition_at.getTime()) / 1000);
    let status: number | null = null;
    let error: string | null = null;
    let result: AttemptResult;
    let retryAfter: string | undefined;
    try {
      const keys = signingKeys(this.#deps.box, m, started);
      const headers = signedHeaders(m.msg_id, Math.floor(started / 1000), m.body, keys);
      const res = await this.#deps.client.post(m.url, headers, m.body, this.#abort.signal);
      status = res.status;
      retryAfter = res.retryAfter;
      result = status >= 200 && status < 300 ? 'success' : 'http_error';
    } catch (err) {
      if (this.#abort.signal.aborted) {
        this.#complete(m, { kind: 'release' });
        return;
      }
      error = err instanceof Error ? err.message : String(err);
      result = err instanceof OutboundError ? err.kind : 'unsigned';
    }
    metrics.attempts.inc({ result });
    const attempt: AttemptRecord = {
      at: new Date(started),
      httpStatus: status,
      error,
      latencyMs: Date.now() - started,
      gone: status === 410,
    };
    this.#complete(m, this.#outcome(m, result, retryAfter), attempt);
  }

  #outcome(m: ClaimedMessage, result: AttemptResult, retryAfter: string | undefined): Outcome {
    if (result === 'success') return { kind: 'success' };
    const wait = nextWait(this.#opts.schedule, m.attempts, parseRetryAfter(retryAfter, Date.now()));
    return wait === undefined ? { kind: 'exhausted' } : { kind: 'retry', waitMs: wait };
  }

  #complete(m: ClaimedMessage, outcome: Outcome, attempt?: AttemptRecord): void {
    this.#done.push({
      seq: m.seq,
      endpointId: m.endpoint_id,
      msgId: m.msg_id,
      type: m.type,
      outcome,
      ...(attempt ? { attempt } : {}),
    });
    this.#recording ??= this.#record();
  }

  /** Every TRIM_EVERY_MS, the attempts log of the endpoints attempted meanwhile. */
  async #trim(): Promise<void> {
    if (Date.now() - this.#trimmedAt < TRIM_EVERY_MS && !this.#stopping) return;
    this.#trimmedAt = Date.now();
    const ids = [...this.#attempted];
    this.#attempted.clear();
    try {
      await trimAttempts(this.#deps.db, ids, this.#opts.attemptsKept);
    } catch (err) {
      this.#deps.logger.warn({ err: String(err) }, 'webhook attempts not trimmed: next time');
      for (const id of ids) this.#attempted.add(id);
    }
  }

  /** Records what finished, batch after batch, until nothing is left; then wakes the claimer. */
  async #record(): Promise<void> {
    const { db, logger, metrics } = this.#deps;
    try {
      if (!this.#stopping) await new Promise((r) => setTimeout(r, RECORD_GATHER_MS));
      while (this.#done.length > 0) {
        const batch = this.#done.splice(0, COMPLETION_BATCH);
        try {
          const r = await recordCompleted(db, batch, this.#opts);
          for (const d of batch) if (d.attempt) this.#attempted.add(d.endpointId);
          await this.#trim();
          if (r.exhausted > 0) metrics.failed.inc(r.exhausted);
          for (const d of r.disabled) {
            metrics.disabled.inc({ reason: d.reason.includes('410') ? 'gone' : 'failing' });
            logger.warn(
              { endpoint: d.id, account: d.account, reason: d.reason },
              'webhook endpoint disabled',
            );
          }
        } catch (err) {
          if (this.#abort.signal.aborted) {
            // Shutting down with Postgres unreachable: their leases run out, and they are sent again.
            logger.warn(
              { err: String(err), results: batch.length },
              'webhook results not recorded',
            );
            continue;
          }
          logger.warn(
            { err: String(err), results: batch.length },
            'webhook results not recorded: retrying',
          );
          this.#done.unshift(...batch);
          await new Promise((r) => setTimeout(r, DB_RETRY_MS));
        }
        this.wake();
      }
    } finally {
      this.#recording = undefined;
    }
  }
}
