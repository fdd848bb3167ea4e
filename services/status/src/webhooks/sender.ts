import type { Logger, SecretBox } from '@herald/kit';
import { type OutboundClient, OutboundError } from '@herald/outbound';
import type { Kysely } from 'kysely';
import type { StatusDb } from '../db-schema.js';
import { type ClaimedMessage, claimDue } from './claim.js';
import { type AttemptRecord, type Completed, type Outcome, recordCompleted } from './completion.js';
import type { AttemptResult, WebhookMetrics } from './metrics.js';
import { nextWait, parseRetryAfter } from './retry.js';
import { NO_WEBHOOK_BOX, sealContext, secretBytes } from './secrets.js';
import { signedHeaders } from './signing.js';

export interface SenderOptions {
  /** WEBHOOK_CONCURRENCY: requests in flight from this instance. */
  concurrency: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY: requests in flight per endpoint, every instance's counted. */
  perEndpoint: number;
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
/**
 * A claim lasts twice the request's timeout and a second: the request's own time, then as long
 * again to record its result. A crashed worker's claims are due again when it ends.
 */
export const leaseMs = (timeoutMs: number): number => 2 * timeoutMs + 1000;

/**
 * Sends the outbox: claims due messages (a lease, shared fairly with every other status instance),
 * signs and POSTs each, and records the results in batches (one transaction for whatever finished
 * while the previous one was written). It wakes when told messages were queued, when a slot
 * frees, and every pollMs.
 */
export class WebhookSender {
  readonly #deps: SenderDeps;
  readonly #opts: SenderOptions;
  readonly #inflight = new Set<Promise<void>>();
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
    const lease = leaseMs(this.#opts.timeoutMs);
    while (!this.#stopping) {
      this.#woken = false;
      const free = this.#opts.concurrency - this.#inflight.size;
      let claimed: ClaimedMessage[] = [];
      try {
        claimed = await claimDue(db, free, this.#opts.perEndpoint, lease);
      } catch (err) {
        logger.warn({ err: String(err) }, 'webhook claim failed: retrying');
        await this.#sleep(DB_RETRY_MS);
        continue;
      }
      for (const m of claimed) {
        const p: Promise<void> = this.#send(m).finally(() => {
          this.#inflight.delete(p);
        });
        this.#inflight.add(p);
      }
      if (!this.#woken) await this.#sleep(this.#opts.pollMs);
    }
  }

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
      const keys = this.#keys(m, started);
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

  /** The endpoint's secret, and the one it replaced while their overlap lasts. */
  #keys(m: ClaimedMessage, now: number): Buffer[] {
    const { box } = this.#deps;
    if (!box) throw new Error(NO_WEBHOOK_BOX);
    const context = sealContext(m.endpoint_id);
    const open = (sealed: string) => {
      try {
        return secretBytes(box.open(sealed, context));
      } catch {
        throw new Error('the endpoint secret does not open under this WEBHOOK_SECRET_KEY');
      }
    };
    const keys = [open(m.secret_sealed)];
    if (m.previous_secret_sealed && m.previous_until && m.previous_until.getTime() > now) {
      // One sealed under a key since replaced is left out: the new secret alone signs.
      try {
        keys.push(open(m.previous_secret_sealed));
      } catch {}
    }
    return keys;
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

  /** Records what finished, batch after batch, until nothing is left; then wakes the claimer. */
  async #record(): Promise<void> {
    const { db, logger, metrics } = this.#deps;
    try {
      while (this.#done.length > 0) {
        const batch = this.#done.splice(0, COMPLETION_BATCH);
        try {
          const r = await recordCompleted(db, batch, this.#opts);
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
